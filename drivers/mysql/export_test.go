package mysql

// Statements returns the driver's acquire and release statements on the
// lease table named table, for BenchmarkStatements.
func Statements(table string) (acquire, release string) {
	t, err := newTable(table)
	if err != nil {
		panic(err)
	}
	return t.acquire, t.release
}
