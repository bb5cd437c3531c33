package dsn

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Kind is the type of a parameter's value.
type Kind int

// The kinds of parameters.
const (
	// String is any text. It may be empty only if the parameter says so.
	String Kind = iota + 1
	// Bool is a value strconv.ParseBool accepts: true, false, 1, 0 ...
	Bool
	// Duration is a value time.ParseDuration accepts, such as 2s or 500ms.
	Duration
	// Int is a decimal integer.
	Int
	// File is the path of a file. The grammar does not read it.
	File
)

// Param declares one parameter of a DSN.
type Param struct {
	Name string
	Kind Kind

	// Default is the value when the DSN leaves the parameter out, written
	// as in a DSN. Empty means none: the getters of [Values] return the
	// zero value.
	Default string

	// Doc says what the parameter does, in a sentence.
	Doc string

	// Min and Max bound a Duration or an Int, written as in a DSN. An
	// empty Min asks for a value above zero; an empty Max sets no bound.
	Min, Max string

	// Empty lets a String be empty.
	Empty bool
}

// Params is a driver's table of parameters.
type Params []Param

// Parse checks the parameters q gives against the table. A parameter the
// table lacks, one given twice and a value out of its kind or bounds are
// errors. The errors name the parameter but quote no value.
func (ps Params) Parse(q url.Values) (Values, error) {
	for _, name := range slices.Sorted(maps.Keys(q)) {
		if ps.find(name) == nil {
			return Values{}, ps.Unknown(name)
		}
	}
	return ps.Take(q)
}

// Take removes the table's parameters from q and checks them as Parse
// does. It leaves the others in q, for a client library that parses them.
func (ps Params) Take(q url.Values) (Values, error) {
	v := Values{params: ps, given: make(map[string]string)}
	for i := range ps {
		p := &ps[i]
		vs, ok := q[p.Name]
		if !ok {
			continue
		}
		delete(q, p.Name)
		if len(vs) != 1 {
			return Values{}, fmt.Errorf("parameter %s given %d times", p.Name, len(vs))
		}
		if err := p.check(vs[0]); err != nil {
			return Values{}, err
		}
		v.given[p.Name] = vs[0]
	}
	return v, nil
}

// Unknown returns the error for a parameter name the table lacks.
func (ps Params) Unknown(name string) error {
	return fmt.Errorf("unknown parameter %s (the driver knows %s)", quoteName(name), ps.Names())
}

// Names lists the table's names, as "a, b and c".
func (ps Params) Names() string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func (ps Params) find(name string) *Param {
	for i := range ps {
		if ps[i].Name == name {
			return &ps[i]
		}
	}
	return nil
}

// check checks the value v of p.
func (p *Param) check(v string) error {
	if v == "" && !(p.Kind == String && p.Empty) {
		return fmt.Errorf("%s is empty", p.Name)
	}
	switch p.Kind {
	case Bool:
		if _, err := strconv.ParseBool(v); err != nil {
			return fmt.Errorf("%s must be true or false", p.Name)
		}
	case Duration:
		d, err := time.ParseDuration(v)
		if err != nil || !p.inBounds(int64(d)) {
			return fmt.Errorf("%s must be %s", p.Name, p.bounds("a duration such as 2s or 500ms"))
		}
	case Int:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || !p.inBounds(n) || int64(int(n)) != n {
			return fmt.Errorf("%s must be %s", p.Name, p.bounds("a number"))
		}
	}
	return nil
}

// inBounds reports whether n is within p's Min and Max.
func (p *Param) inBounds(n int64) bool {
	lo, hi := p.limit(p.Min), p.limit(p.Max)
	if p.Min == "" {
		return n > 0 && (p.Max == "" || n <= hi)
	}
	return n >= lo && (p.Max == "" || n <= hi)
}

// limit reads a bound of p.
func (p *Param) limit(s string) int64 {
	if s == "" {
		return 0
	}
	if p.Kind == Duration {
		d, err := time.ParseDuration(s)
		if err != nil {
			panic("dsn: parameter " + p.Name + ": bad bound " + s)
		}
		return int64(d)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		panic("dsn: parameter " + p.Name + ": bad bound " + s)
	}
	return n
}

// bounds describes the values p accepts, of the kind what.
func (p *Param) bounds(what string) string {
	switch {
	case p.Min == "" && p.Max == "":
		return "a positive " + strings.TrimPrefix(what, "a ")
	case p.Max == "":
		return fmt.Sprintf("%s, %s or more", what, p.Min)
	case p.Min == "":
		return fmt.Sprintf("%s above 0, up to %s", what, p.Max)
	}
	return fmt.Sprintf("%s from %s to %s", what, p.Min, p.Max)
}

// Values are the parameters of one DSN, checked against their table. The
// getters return the value given, or else the table's default, or else
// the zero value. They panic on a name the table lacks or of another
// kind: that is a mistake in the driver, not in the DSN.
type Values struct {
	params Params
	given  map[string]string
}

// Has reports whether the DSN gives the parameter name.
func (v Values) Has(name string) bool {
	v.param(name, 0)
	_, ok := v.given[name]
	return ok
}

// String returns the value of a String or File parameter.
func (v Values) String(name string) string {
	p := v.param(name, String)
	if s, ok := v.given[name]; ok {
		return s
	}
	return p.Default
}

// Bool returns the value of a Bool parameter.
func (v Values) Bool(name string) bool {
	b, _ := strconv.ParseBool(v.raw(v.param(name, Bool)))
	return b
}

// Duration returns the value of a Duration parameter.
func (v Values) Duration(name string) time.Duration {
	d, _ := time.ParseDuration(v.raw(v.param(name, Duration)))
	return d
}

// Int returns the value of an Int parameter.
func (v Values) Int(name string) int {
	n, _ := strconv.Atoi(v.raw(v.param(name, Int)))
	return n
}

// Encode returns the parameters given, sorted by name and URL-encoded.
func (v Values) Encode() string {
	q := make(url.Values, len(v.given))
	for name, s := range v.given {
		q.Set(name, s)
	}
	return q.Encode()
}

func (v Values) raw(p *Param) string {
	if s, ok := v.given[p.Name]; ok {
		return s
	}
	return p.Default
}

// param returns the parameter name of the table, of kind k (File counts
// as String; 0 is any kind).
func (v Values) param(name string, k Kind) *Param {
	p := v.params.find(name)
	if p == nil {
		panic("dsn: no parameter " + name + " in the table")
	}
	if kind := p.Kind; k != 0 && kind != k && !(k == String && kind == File) {
		panic("dsn: parameter " + name + " is of another kind")
	}
	return p
}

// quoteName quotes a parameter name for an error, cut short if long.
func quoteName(s string) string {
	if len(s) > 64 {
		s = strings.ToValidUTF8(s[:64], "") + "..."
	}
	return strconv.Quote(s)
}
