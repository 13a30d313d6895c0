package dashboard

// keysetPage cuts rows read with one more than n (limit n+1) to a page of n, and returns the id
// of its last row to continue from, or 0 when rows was the last page.
func keysetPage[T any](rows []T, n int, id func(T) int64) ([]T, int64) {
	if len(rows) <= n {
		return rows, 0
	}
	return rows[:n], id(rows[n-1])
}
