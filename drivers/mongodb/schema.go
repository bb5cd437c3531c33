package mongodb

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// codeNamespaceExists is the server's error code for creating a
// collection that exists.
const codeNamespaceExists = 48

// ensureSchema creates the collection if it is missing (concurrent
// creators are fine), or, if create is false, checks that it exists. The
// driver needs no index but _id's: a grant's _id encodes its key and
// fence, so the primary key is the unique index that decides who wins.
func ensureSchema(ctx context.Context, coll *mongo.Collection, create bool) error {
	if create {
		err := coll.Database().CreateCollection(ctx, coll.Name())
		var ce mongo.CommandError
		if err != nil && !(errors.As(err, &ce) && ce.HasErrorCode(codeNamespaceExists)) {
			return fmt.Errorf("mongodb: creating collection %s: %w", coll.Name(), err)
		}
		return nil
	}
	names, err := coll.Database().ListCollectionNames(ctx, bson.D{{Key: "name", Value: coll.Name()}})
	if err != nil {
		return fmt.Errorf("mongodb: listing the collections of %s: %w", coll.Database().Name(), err)
	}
	if len(names) == 0 {
		return fmt.Errorf("mongodb: collection %s.%s does not exist, and the driver was told not to create it (%s=false)",
			coll.Database().Name(), coll.Name(), paramCreate)
	}
	return nil
}
