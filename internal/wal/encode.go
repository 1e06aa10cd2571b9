package wal

import "fmt"

// Encode returns r's payload in the log's format (the bytes a frame
// carries, without the frame: package doc, "Files"), for a store that
// keeps records elsewhere than in segments, such as the replicated log of
// package ha. It refuses what Enqueue refuses of r alone: a statement
// barrier above the record's, a form of dialect 0 or two of one dialect,
// and a payload larger than MaxRecordBytes (ErrTooLarge).
func Encode(r Record) ([]byte, error) {
	if err := r.validate(); err != nil {
		return nil, err
	}
	p := appendRecord(nil, &r)
	if len(p) > MaxRecordBytes {
		return nil, fmt.Errorf("%w: the record of txn %d is %d bytes, more than %d", ErrTooLarge, r.Txn, len(p), MaxRecordBytes)
	}
	return p, nil
}

// Decode reads a payload written by Encode (or found in a segment). It
// accepts exactly the encodings Open accepts and never panics; a failure
// wraps ErrCorrupt, since bytes that were once encoded by Encode and do
// not decode were damaged or written by a bug.
func Decode(p []byte) (Record, error) {
	if len(p) > MaxRecordBytes {
		return Record{}, fmt.Errorf("%w: a payload of %d bytes, more than %d", ErrCorrupt, len(p), MaxRecordBytes)
	}
	r, err := decodeRecord(p)
	if err != nil {
		return Record{}, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return r, nil
}
