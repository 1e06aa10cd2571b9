package answer

// AppendHinted appends the canonical form of v, a value of column col of
// an engine's answer, read with the PostgreSQL type hint gives for that
// column (see DigestWith): what compare-and-repair compares rows by, so
// that rows are equal exactly when a vote would find them equal.
func AppendHinted(dst []byte, v Value, col, hint Column) []byte {
	return appendCanonical(dst, &v, readingOf(&v, &col, &hint))
}
