package mongodb

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// indexName is the name of the unique index on (key, fence).
const indexName = "distlock_key_fence"

// codeNamespaceExists is the server's error code for creating a
// collection that exists.
const codeNamespaceExists = 48

var indexKeys = bson.D{{Key: "key", Value: 1}, {Key: "fence", Value: 1}}

// ensureSchema creates the collection and its unique index if they are
// missing (concurrent creators are fine), or, if create is false, checks
// that the index exists.
func ensureSchema(ctx context.Context, coll *mongo.Collection, create bool) error {
	if create {
		err := coll.Database().CreateCollection(ctx, coll.Name())
		var ce mongo.CommandError
		if err != nil && !(errors.As(err, &ce) && ce.HasErrorCode(codeNamespaceExists)) {
			return fmt.Errorf("mongodb: creating collection %s: %w", coll.Name(), err)
		}
		_, err = coll.Indexes().CreateOne(ctx, mongo.IndexModel{
			Keys:    indexKeys,
			Options: options.Index().SetName(indexName).SetUnique(true),
		})
		if err != nil {
			return fmt.Errorf("mongodb: creating index %s on %s: %w", indexName, coll.Name(), err)
		}
		return nil
	}
	specs, err := coll.Indexes().ListSpecifications(ctx)
	if err != nil {
		return fmt.Errorf("mongodb: listing the indexes of %s: %w", coll.Name(), err)
	}
	for _, s := range specs {
		if s.Unique != nil && *s.Unique && keysAre(s.KeysDocument, indexKeys) {
			return nil
		}
	}
	return fmt.Errorf("mongodb: collection %s.%s has no unique index on {key: 1, fence: 1}, and the driver was told not to create it (%s=false)",
		coll.Database().Name(), coll.Name(), paramCreate)
}

// keysAre reports whether an index's key document is want.
func keysAre(doc bson.Raw, want bson.D) bool {
	elems, err := doc.Elements()
	if err != nil || len(elems) != len(want) {
		return false
	}
	for i, e := range elems {
		if e.Key() != want[i].Key {
			return false
		}
		n, ok := e.Value().AsInt64OK()
		if !ok || n != int64(want[i].Value.(int)) {
			return false
		}
	}
	return true
}
