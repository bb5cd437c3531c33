package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// benchMongoDropTimeout bounds the drop of a run's collection.
const benchMongoDropTimeout = 5 * time.Second

// benchMongoGrants is the collection of a run's grants, in bench's own
// database. Bench drops it when it ends: the mongodb driver deletes a key's
// superseded grants 30s after a later acquisition, on a connection still
// open then, so the grants of bench's keys (used for seconds, by clients
// closed after each measurement) would stay, and FerretDB's requests slow
// down as a collection grows.
type benchMongoGrants struct {
	uri  string // the server's URI, without bench's parameters
	coll string
}

// or returns g, or, if g is nil and driver d's default DSN got bench's
// parameters, the collection that DSN names.
func (g *benchMongoGrants) or(d, dsn string, getenv func(string) string, run string) *benchMongoGrants {
	if g != nil || d != "mongodb" || !strings.Contains(dsn, "distlock_collection=grants_"+run) {
		return g
	}
	return &benchMongoGrants{uri: benchMongoBase(getenv), coll: "grants_" + run}
}

// drop drops the collection, under a timeout of its own, even when ctx was
// cancelled (an interrupted run cleans up too).
func (g *benchMongoGrants) drop(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), benchMongoDropTimeout)
	defer cancel()
	c, err := mongo.Connect(options.Client().ApplyURI(g.uri))
	if err != nil {
		return fmt.Errorf("drop the run's collection %s.%s: %w", benchMongoDatabase, g.coll, err)
	}
	err = c.Database(benchMongoDatabase).Collection(g.coll).Drop(ctx)
	if err != nil {
		err = fmt.Errorf("drop the run's collection %s.%s: %w", benchMongoDatabase, g.coll, err)
	}
	return errors.Join(err, c.Disconnect(ctx))
}
