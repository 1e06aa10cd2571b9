package wal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrCorrupt is wrapped by every error that reports damage Open will not
// repair by itself. errors.As with *CorruptError gives the place.
var ErrCorrupt = errors.New("wal: corrupt log")

// CorruptError locates damage in a segment.
type CorruptError struct {
	File   string
	Offset int64
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("wal: corrupt log: %s at offset %d: %s", e.File, e.Offset, e.Reason)
}

func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// segment is one file of the log. Its name is the barrier of its first
// record, zero-padded to 20 digits so that names sort as numbers do.
type segment struct {
	first uint64
	path  string
}

const segmentSuffix = ".wal"

func segmentPath(dir string, first uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", first, segmentSuffix))
}

// parseSegmentName returns the first barrier a segment's file name
// encodes; ok is false for any other file.
func parseSegmentName(name string) (first uint64, ok bool) {
	digits, found := strings.CutSuffix(name, segmentSuffix)
	if !found || len(digits) != 20 || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, false
	}
	first, err := strconv.ParseUint(digits, 10, 64)
	return first, err == nil
}

// listSegments returns dir's segments, oldest first. Other files are
// left alone.
func listSegments(dir string) ([]segment, error) {
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return nil, fmt.Errorf("wal: %w", err)
	}
	var segs []segment
	for _, e := range entries {
		if first, ok := parseSegmentName(e.Name()); ok && e.Type().IsRegular() {
			segs = append(segs, segment{first: first, path: filepath.Join(dir, e.Name())})
		}
	}
	return segs, nil
}

// barrierOrder checks that barriers grow strictly across the whole log.
type barrierOrder struct {
	last uint64
	any  bool
}

func (o *barrierOrder) accepts(b uint64) bool { return !o.any || b > o.last }

func (o *barrierOrder) add(b uint64) { o.last, o.any = b, true }

// scanned is what reading one segment found.
type scanned struct {
	records []Record
	// end is the offset just past the last intact frame.
	end int64
	// damage says why reading stopped before the end of the data; empty
	// when every byte belonged to an intact frame.
	damage frameDamage
}

// scanSegment reads the frames of one segment's data. Frame damage stops
// the scan and is reported in the result, for the caller to judge: it is
// a torn tail in the last segment and corruption anywhere else. A record
// that passed its checksum but does not decode, or breaks the barrier
// order, is corruption wherever it is.
func scanSegment(data []byte, seg segment, order *barrierOrder) (scanned, error) {
	var s scanned
	for off := 0; off < len(data); {
		payload, size, damage := nextFrame(data[off:])
		if damage != "" {
			s.damage = damage
			break
		}
		r, err := decodeRecord(payload)
		if err == nil {
			err = r.validate()
		}
		switch {
		case err != nil:
			return s, &CorruptError{File: seg.path, Offset: int64(off), Reason: err.Error()}
		case len(s.records) == 0 && r.Barrier != seg.first:
			return s, &CorruptError{File: seg.path, Offset: int64(off),
				Reason: fmt.Sprintf("first record has barrier %d, the file name says %d", r.Barrier, seg.first)}
		case !order.accepts(r.Barrier):
			return s, &CorruptError{File: seg.path, Offset: int64(off),
				Reason: fmt.Sprintf("barrier %d does not follow %d", r.Barrier, order.last)}
		}
		order.add(r.Barrier)
		s.records = append(s.records, r)
		off += size
		s.end = int64(off)
	}
	return s, nil
}

// syncDir makes the creation or removal of entries in dir durable.
func syncDir(dir string, sync func(*os.File) error) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	err = sync(d)
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("wal: sync directory %s: %w", dir, err)
	}
	return nil
}
