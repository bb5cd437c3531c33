package main

import (
	"context"
	"errors"
	"fmt"
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
	uri  string // the server's URI, without the lock driver's parameters
	coll string
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
