package mongodb

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/distlock/lock/driver/dsn"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/connstring"
)

// paramPrefix starts the name of every parameter of the driver's own.
// The Go driver keeps these as unknown options; an unknown one of ours is
// an error.
const paramPrefix = "distlock_"

// paramCreate is the parameter that lets the driver create its collection.
const paramCreate = "distlock_create_collection"

// params are the driver's own parameters. The database's default is the
// URI's path, else [DefaultDatabase].
var params = dsn.Params{
	{Name: "distlock_database", Kind: dsn.String, Doc: "The database of the grants."},
	{Name: "distlock_collection", Kind: dsn.String, Default: DefaultCollection, Doc: "The grants collection."},
	{Name: paramCreate, Kind: dsn.Bool, Default: "true", Doc: "False: never create the collection, only check that it exists."},
	{Name: "distlock_prune", Kind: dsn.Bool, Default: "true", Doc: "False: keep superseded grants instead of deleting them."},
	{Name: "distlock_request_timeout", Kind: dsn.Duration, Default: DefaultRequestTimeout.String(), Doc: "Bounds each call, connecting included."},
}

// settings is the configuration a DSN describes.
type settings struct {
	client *options.ClientOptions
	config Config
}

// parseDSN parses a DSN for [Driver.OpenConnector], without contacting
// anything: the Go driver reads the URI, and the driver takes its own
// parameters from the options the Go driver does not know. Its errors
// quote neither the DSN nor its password.
func parseDSN(s string) (settings, error) {
	if strings.HasPrefix(s, "mongodb+srv://") {
		return settings{}, errors.New("invalid DSN: mongodb+srv:// URIs are resolved through DNS, which lock.Open must not do: connect with the Go driver and use mongodb.New")
	}
	cs, err := connstring.Parse(s)
	if err != nil {
		return settings{}, errors.New("invalid DSN: " + dsn.Redact(err.Error(), dsn.URLSecrets(s)...))
	}
	values, err := takeParams(cs.UnknownOptions)
	if err != nil {
		return settings{}, fmt.Errorf("invalid DSN: %w", err)
	}
	opts := options.Client().ApplyURI(s)
	if err := opts.Validate(); err != nil {
		return settings{}, errors.New("invalid DSN: " + dsn.Redact(err.Error(), append(dsn.URLSecrets(s), cs.Password)...))
	}
	cfg := Config{
		Database:       values.String("distlock_database"),
		Collection:     values.String("distlock_collection"),
		NoCreate:       !values.Bool(paramCreate),
		NoPrune:        !values.Bool("distlock_prune"),
		RequestTimeout: values.Duration("distlock_request_timeout"),
		// The URI's own concerns win; otherwise newConnector picks the
		// strong defaults. The mongo.Client gets the same, for anything
		// else it does.
		WriteConcern: opts.WriteConcern,
		ReadConcern:  opts.ReadConcern,
	}
	if cfg.Database == "" {
		cfg.Database = cs.Database
	}
	return settings{client: opts, config: cfg}, nil
}

// takeParams takes the driver's parameters from the options the Go driver
// does not know, and checks them.
func takeParams(unknown map[string][]string) (dsn.Values, error) {
	q := make(url.Values)
	for k, vs := range unknown {
		if strings.HasPrefix(k, paramPrefix) {
			q[k] = vs
		}
	}
	return params.Parse(q)
}
