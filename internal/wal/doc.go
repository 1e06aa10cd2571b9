// Package wal is shepherd's write-ahead log of committed transactions.
//
// When shepherd restarts, the replicas may disagree about what committed:
// some ran a transaction, some did not get to it, and the coordinator's
// memory of the order is gone. The log keeps that memory on disk: one
// record per committed transaction, holding its id, its commit barrier and
// its statements with their arguments, in commit order. A restarted
// shepherd reads the records back and replays to each replica what that
// replica lacks. The package does file I/O and nothing else; it knows no
// SQL and imports nothing of shepherd's.
//
// # The durability contract
//
// Append returns nil only after the record, and every record accepted
// before it, has been written and fsynced. The caller acknowledges COMMIT
// to the client after that, never before, so every COMMIT a client has
// heard is in the log. The converse does not hold: a record may be on
// disk although its Append returned an error (ctx ended while the write
// was under way) or never returned (shepherd crashed between the fsync and
// the reply). Replay must therefore treat the log as "these transactions
// committed", which is true: a record is only written for a transaction
// the coordinator already decided to commit.
//
// Records are accepted in barrier order only. The commit order is decided
// by the coordinator, not here, so a barrier that does not exceed the
// previous one is the caller's bug and is refused with ErrBarrierOrder.
// A coordinator that decides commits under a lock calls Enqueue under
// that lock, which only queues the record, and waits on the returned
// Pending after releasing it; Append is the two in one call.
//
// If a write or an fsync fails, the log stops: every pending and later
// record gets the error, and so does Close. Retrying an fsync is unsafe,
// because Linux may have thrown the dirty pages away after reporting the
// failure, and a second fsync would then report success for data that is
// not on disk. Restarting (Open) reads back what really is there.
//
// # Group commit
//
// One goroutine, the flusher, does all writing. It takes everything that
// is queued, copies the frames into one buffer, writes it with one call
// and fsyncs once. Records that arrive while it is busy wait and form the
// next batch. There is no timer: an idle log writes a lone record at once,
// and a loaded log batches as many records as arrive during one fsync, so
// the batch size follows the disk's latency by itself. Stats reports
// records and batches; with 32 appenders the tests see 15 to 30 records
// per fsync.
//
// # Files
//
// The log is a directory of segments. A segment is named after the
// barrier of its first record, as 20 zero-padded digits and ".wal"
// (00000000000000000042.wal), so that the names sort in log order. The
// flusher starts a new segment when the next record would take the
// current one past Options.SegmentBytes (64 MiB by default); a larger
// record gets a segment of its own. Before starting one it writes and
// fsyncs the old segment, and after creating it it fsyncs the directory,
// so a record is never reported durable while its file's name could still
// vanish. A file named LOCK holds an flock while a Log is open.
//
// A segment is a sequence of frames and nothing else:
//
//	frame     = length:uint32le crc:uint32le payload        (length = len(payload) > 0)
//	payload   = version:byte txn:uvarint barrier:uvarint count:uvarint statement*
//	statement = flags:byte barrier:uvarint sql:str count:uvarint value* verb:str forms:uvarint form*
//	form      = dialect:byte flags:byte text:ref [sql:str] args:ref [count:uvarint value*]
//	value     = flags:byte type:byte [text:str, absent for NULL]
//	str       = length:uvarint bytes
//	ref       = uvarint: 0, the literal follows; k, the k-th text (argument list) so far
//
// crc is the CRC-32C (Castagnoli) of the payload; uvarint is the unsigned
// varint of encoding/binary; version is 2; the flag bits are "may change
// state" and "changes the schema" for a statement, "returns rows" for a
// form, and NULL for a value. A form is the statement as the replicas of
// one dialect ran it, text and arguments with the values shepherd pinned,
// so that replay sends exactly that and never translates the client's
// text again against a schema that has changed since. Most forms repeat
// the client's text or another form's, so a form refers to an earlier
// text or argument list instead of copying it (the statement's own come
// first in the count). The decoder accepts one encoding per record:
// unknown versions or flags, non-minimal varints, references that are
// not to the first equal entry, literals equal to an earlier entry,
// counts the remaining bytes cannot hold and trailing bytes are refused.
// A payload is at most MaxRecordBytes.
//
// Version 1, written by older shepherds, is still read: it has no verb
// and no forms, and no "changes the schema" flag. Its records decode with
// empty Forms; replaying one of them to a replica that lacks it is
// refused by the caller rather than guessed.
//
// The format is written by hand because it is small and settled: a few
// field kinds, no optional fields beyond flags and references, no schema
// evolution beyond the version byte. A serialisation library (protobuf, gob) would
// add a dependency, or a self-describing encoding, without removing any
// of the framing and checksumming this package must do anyway, and its
// decoder would be one more body of code to trust with bytes from a
// damaged disk. The hand-written decoder is fuzzed (FuzzDecode).
//
// # Recovery
//
// Open reads every segment in name order and checks every frame's length
// and checksum, that each record decodes, that barriers grow strictly
// across the whole log, and that each segment's first record matches the
// segment's name. What it does with damage depends on where it is.
//
// In the last segment, damage is taken for a torn tail: the machine went
// down while the flusher was writing, so the last batch reached the disk
// only in part (a short frame, a frame whose checksum fails, zeros or
// junk where a frame should start). None of those records was reported
// durable, so Open cuts the file back to the end of the last intact
// frame, fsyncs it, and reports what it cut through Log.Repaired. A last
// segment left with no intact record is removed, and the segment before
// it takes new records. A checksum cannot tell a torn write from decay of
// bytes that were once fsynced, so a damaged record in the middle of the
// last segment also ends the log there, together with the intact records
// after it; Repaired then shows a cut larger than one batch, and it
// should be logged loudly.
//
// In any other segment there is no torn tail to explain damage, since a
// segment is fsynced before the next is created, and Open fails with an
// error wrapping ErrCorrupt (a *CorruptError naming the file and offset),
// having changed nothing on disk. A record whose checksum holds but whose
// content is wrong (it does not decode, or breaks the barrier order) is
// ErrCorrupt wherever it is: that is a bug, not a crash.
//
// # Truncation
//
// TruncateBefore(b) removes the segments whose records all have barriers
// below b; the caller invokes it once every replica holds those
// transactions. It removes whole segments, oldest first (a crash midway
// leaves no gap), and never the last one, nor the one holding b-1: the
// oldest segment kept holds a record every replica applied, so durable,
// and a log that held a record is never empty again, even when a crash
// tore the records after it (an empty log is one that never held a
// record). So the log keeps at most two segments' worth of transactions
// that every replica already has. Open
// may return such records; replay skips what a replica's own log table
// says it has.
package wal
