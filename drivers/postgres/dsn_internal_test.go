package postgres

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestSplitDSN(t *testing.T) {
	cases := []struct {
		name, dsn string
		rest      string
		params    map[string]string
		secrets   []string // each must be among the secrets found
	}{
		{"url", "postgres://u:pw@h:5432/db?sslmode=disable&distlock_table=t1&application_name=x",
			"postgres://u:pw@h:5432/db?sslmode=disable&application_name=x", map[string]string{"distlock_table": "t1"}, []string{"pw"}},
		{"urlOnlyOurs", "postgresql://h/db?distlock_table=t&distlock_create_table=false",
			"postgresql://h/db", map[string]string{"distlock_table": "t", "distlock_create_table": "false"}, nil},
		{"urlNoQuery", "postgres://u:pw@h/db", "postgres://u:pw@h/db", map[string]string{}, []string{"pw"}},
		{"urlMultiHost", "postgres://h1:1,h2:2/db?distlock_table=t&target_session_attrs=read-write",
			"postgres://h1:1,h2:2/db?target_session_attrs=read-write", map[string]string{"distlock_table": "t"}, nil},
		{"urlIPv6", "postgres://[::1]:5432,[fe80::1]/db?distlock_create_table=0",
			"postgres://[::1]:5432,[fe80::1]/db", map[string]string{"distlock_create_table": "0"}, nil},
		{"urlNoPath", "postgres://h?distlock_table=t", "postgres://h", map[string]string{"distlock_table": "t"}, nil},
		{"urlEncodedPassword", "postgres://u:p%3Fw@h/db?distlock_table=t", "postgres://u:p%3Fw@h/db",
			map[string]string{"distlock_table": "t"}, []string{"p%3Fw", "p?w"}},
		{"urlQuestionMarkInUserinfo", "postgres://u:p?w@h/db?distlock_table=t", "postgres://u:p?w@h/db",
			map[string]string{"distlock_table": "t"}, []string{"p?w"}},
		{"urlEncodedKeyAndValue", "postgres://h/db?distlock_%74able=a%5Fb", "postgres://h/db",
			map[string]string{"distlock_table": "a_b"}, nil},
		{"urlPasswordParam", "postgres://h/db?password=sec%21&distlock_table=t&sslpassword=key",
			"postgres://h/db?password=sec%21&sslpassword=key", map[string]string{"distlock_table": "t"}, []string{"sec%21", "sec!", "key"}},
		{"keywordValue", "host=h password='pa ss' distlock_table=t dbname=d",
			"host=h password='pa ss' dbname=d", map[string]string{"distlock_table": "t"}, []string{"pa ss"}},
		{"keywordValueParamInPassword", "host=h password='distlock_table=evil' dbname=d",
			"host=h password='distlock_table=evil' dbname=d", map[string]string{}, []string{"distlock_table=evil"}},
		{"keywordValueQuotedEscapes", `distlock_table = 'my\'t'   host=h\ x`,
			`host=h\ x`, map[string]string{"distlock_table": "my't"}, nil},
		{"keywordValueOnlyOurs", " distlock_create_table=false ", "", map[string]string{"distlock_create_table": "false"}, nil},
		{"keywordValueEmptyValues", "host='' distlock_table=t password=", "host='' password=", map[string]string{"distlock_table": "t"}, nil},
		// As in libpq, spaces after "=" are skipped: this host is named "distlock_table=t".
		{"keywordValueSpaceAfterEquals", "host= distlock_table=t", "host= distlock_table=t", map[string]string{}, nil},
		{"empty", "", "", map[string]string{}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := splitDSN(tc.dsn)
			if err != nil {
				t.Fatalf("splitDSN: %v", err)
			}
			if d.rest != tc.rest {
				t.Errorf("rest = %q, want %q", d.rest, tc.rest)
			}
			if !maps.Equal(d.params, tc.params) {
				t.Errorf("params = %v, want %v", d.params, tc.params)
			}
			for _, s := range tc.secrets {
				if !slices.Contains(d.secrets, s) {
					t.Errorf("secrets = %q, want %q among them", d.secrets, s)
				}
			}
		})
	}
}

func TestSplitDSN_malformed(t *testing.T) {
	for _, dsn := range []string{
		"host=h password='s3cr3t",
		"host=h s3cr3t",
		"host=h password=s3cr3t junk",
		"host=h =s3cr3t",
		"postgres://u:s3cr3t@h/db?distlock_table=%zz",
		"postgres://u:s3cr3t@[::1/db",
		"host=h password=s3cr3t\x00",
	} {
		_, err := splitDSN(dsn)
		if err == nil {
			t.Errorf("splitDSN(%q) succeeded, want an error", dsn)
			continue
		}
		if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("splitDSN(%q) = %v: the error repeats the password", dsn, err)
		}
	}
}

func TestNewTable(t *testing.T) {
	for _, name := range []string{"", "locks", "_x1", "app.locks", "Locks", strings.Repeat("a", 63)} {
		if _, err := newTable(name); err != nil {
			t.Errorf("newTable(%q): %v", name, err)
		}
	}
	for _, name := range []string{
		"bad-name", "1abc", `a"b`, "a;drop table x", "a.b.c", ".a", "a.", "a b", "ключ",
		strings.Repeat("a", 64), "app." + strings.Repeat("a", 60),
	} {
		if _, err := newTable(name); err == nil {
			t.Errorf("newTable(%q) succeeded, want an error", name)
		}
	}
	tb, _ := newTable("app.Locks")
	if tb.ident != `"app"."Locks"` || !strings.Contains(tb.release, `pg_notify('app.Locks', key)`) || tb.listen != `LISTEN "app.Locks"` {
		t.Errorf("table app.Locks: ident %s, listen %s, release %s", tb.ident, tb.listen, tb.release)
	}
}
