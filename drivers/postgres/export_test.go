package postgres

// Statements returns the driver's acquire and release statements on
// table, for the benchmark that sends them by hand (BenchmarkHandWritten's
// ours-statements).
func Statements(table string) (acquire, release string, err error) {
	t, err := newTable(table)
	if err != nil {
		return "", "", err
	}
	return t.acquire, t.release, nil
}
