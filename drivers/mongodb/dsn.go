package mongodb

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// The driver's own DSN parameters. Every parameter whose name starts with
// paramPrefix belongs to the driver: it is removed before the URI goes to
// the Go driver, and an unknown one is an error.
const (
	paramPrefix   = "distlock_"
	paramDatabase = "distlock_database"
	paramColl     = "distlock_collection"
	paramCreate   = "distlock_create_collection"
	paramPrune    = "distlock_prune"
	paramTimeout  = "distlock_request_timeout"
)

// settings is the configuration a DSN describes.
type settings struct {
	client *options.ClientOptions
	config Config
}

// splitURI removes the driver's parameters from a mongodb:// URI. It
// returns the rest of the URI, the driver's parameters (decoded), and the
// URI's password, if any, as written and decoded (to keep out of errors).
// Its errors never quote the URI.
func splitURI(s string) (rest string, params map[string]string, secrets []string, err error) {
	if strings.IndexByte(s, 0) >= 0 {
		return "", nil, nil, errors.New("contains a NUL byte")
	}
	if strings.HasPrefix(s, "mongodb+srv://") {
		return "", nil, nil, errors.New("mongodb+srv:// URIs are resolved through DNS, which lock.Open must not do: connect with the Go driver and use mongodb.New")
	}
	body, ok := strings.CutPrefix(s, "mongodb://")
	if !ok {
		return "", nil, nil, errors.New(`not a mongodb:// URI`)
	}
	// The userinfo ends at the last '@' before the path (the spec requires
	// '@' in credentials to be percent-encoded, but be lenient).
	hostsEnd := strings.IndexAny(body, "/?")
	if hostsEnd < 0 {
		hostsEnd = len(body)
	}
	if at := strings.LastIndexByte(body[:hostsEnd], '@'); at >= 0 {
		if _, pw, ok := strings.Cut(body[:at], ":"); ok && pw != "" {
			secrets = append(secrets, pw)
			if dec, err := url.PathUnescape(pw); err == nil && dec != pw {
				secrets = append(secrets, dec)
			}
		}
	}
	params = make(map[string]string)
	q := strings.IndexByte(s, '?')
	if q < 0 || q < len("mongodb://")+hostsEnd {
		return s, params, secrets, nil
	}
	var kept []string
	for pair := range strings.SplitSeq(s[q+1:], "&") {
		rawKey, rawValue, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(rawKey)
		if err != nil {
			key = rawKey
		}
		if !strings.HasPrefix(strings.ToLower(key), paramPrefix) {
			kept = append(kept, pair)
			continue
		}
		v, err := url.QueryUnescape(rawValue)
		if err != nil {
			return "", nil, nil, fmt.Errorf("parameter %s: invalid percent-encoding", truncate(key, 64))
		}
		if _, dup := params[key]; dup {
			return "", nil, nil, fmt.Errorf("parameter %s is given twice", truncate(key, 64))
		}
		params[key] = v
	}
	rest = s[:q]
	if len(kept) > 0 {
		rest += "?" + strings.Join(kept, "&")
	}
	return rest, params, secrets, nil
}

// parseDSN parses a DSN for [Driver.OpenConnector], without contacting
// anything. Its errors quote neither the DSN nor its password.
func parseDSN(s string) (settings, error) {
	rest, params, secrets, err := splitURI(s)
	if err != nil {
		return settings{}, fmt.Errorf("invalid DSN: %w", err)
	}
	var cfg Config
	for k, v := range params {
		switch k {
		case paramDatabase:
			if v == "" {
				return settings{}, fmt.Errorf("invalid DSN: %s is empty", paramDatabase)
			}
			cfg.Database = v
		case paramColl:
			if v == "" {
				return settings{}, fmt.Errorf("invalid DSN: %s is empty", paramColl)
			}
			cfg.Collection = v
		case paramCreate, paramPrune:
			b, err := strconv.ParseBool(v)
			if err != nil {
				return settings{}, fmt.Errorf("invalid DSN: %s=%q is not true or false", k, truncate(v, 64))
			}
			if k == paramCreate {
				cfg.NoCreate = !b
			} else {
				cfg.NoPrune = !b
			}
		case paramTimeout:
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return settings{}, fmt.Errorf("invalid DSN: %s is not a positive duration such as 5s or 500ms", k)
			}
			cfg.RequestTimeout = d
		default:
			return settings{}, fmt.Errorf("invalid DSN: unknown parameter %q (the driver knows %s, %s, %s, %s and %s)",
				truncate(k, 64), paramDatabase, paramColl, paramCreate, paramPrune, paramTimeout)
		}
	}
	opts := options.Client().ApplyURI(rest)
	if err := opts.Validate(); err != nil {
		return settings{}, errors.New("invalid DSN: " + redact(err.Error(), secrets))
	}
	if cfg.Database == "" {
		cfg.Database = uriDatabase(rest)
	}
	// The URI's own concerns win; otherwise newConnector picks the strong
	// defaults. The mongo.Client gets the same, for anything else it does.
	cfg.WriteConcern = opts.WriteConcern
	cfg.ReadConcern = opts.ReadConcern
	return settings{client: opts, config: cfg}, nil
}

// uriDatabase returns the database named in the URI's path, if any.
func uriDatabase(uri string) string {
	body := strings.TrimPrefix(uri, "mongodb://")
	if i := strings.IndexByte(body, '?'); i >= 0 {
		body = body[:i]
	}
	i := strings.IndexByte(body, '/')
	if i < 0 {
		return ""
	}
	db, err := url.PathUnescape(body[i+1:])
	if err != nil {
		return ""
	}
	return db
}

// redact replaces every secret in msg.
func redact(msg string, secrets []string) string {
	secrets = slices.Clone(secrets)
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) }) // longest first
	for _, s := range secrets {
		msg = strings.ReplaceAll(msg, s, "xxxxx")
	}
	return msg
}
