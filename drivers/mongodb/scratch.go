package mongodb

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/distlock/lock/driver"
	"go.mongodb.org/mongo-driver/v2/bson"
)

var _ driver.ScratchLister = (*conn)(nil)

// ListScratch returns the collections of the connection's database whose
// names begin with prefix, sorted. It asks listCollections for the names
// that match the anchored regular expression ^prefix, prefix quoted, and
// compares them again, exactly. Collections whose names the DSN cannot
// give (distlock_collection takes letters, digits and '_') are left out.
// It refuses an empty prefix with an error matching
// driver.ErrMisconfigured.
func (c *conn) ListScratch(ctx context.Context, prefix string) ([]string, error) {
	if prefix == "" {
		return nil, fmt.Errorf("mongodb: list scratch collections: %w: empty prefix", driver.ErrMisconfigured)
	}
	cctx, end := begin(ctx, c.timeout, c.reach)
	defer end()
	filter := bson.D{{Key: "name", Value: bson.D{{Key: "$regex", Value: "^" + regexp.QuoteMeta(prefix)}}}}
	found, err := c.coll.Database().ListCollectionNames(cctx, filter)
	if err != nil {
		return nil, fail(ctx, cctx, c.timeout, fmt.Errorf("mongodb: list scratch collections: %w", err))
	}
	var names []string
	for _, n := range found {
		if strings.HasPrefix(n, prefix) && validName.MatchString(n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names, nil
}
