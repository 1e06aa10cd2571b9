package wal

import (
	"encoding/binary"
	"hash/crc32"
)

// A frame is [length:uint32 LE][crc:uint32 LE][payload], where length
// counts the payload bytes and crc is the CRC-32C (Castagnoli) of the
// payload.
const frameHeaderBytes = 8

// MaxRecordBytes bounds one record's encoded payload. Append refuses a
// larger record, and a length field above it is read as damage, so a
// flipped bit in a length can never ask for a huge allocation.
const MaxRecordBytes = 1 << 28

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendFrame appends r framed: it reserves the header, encodes the
// payload after it, then fills the header in.
func appendFrame(b []byte, r *Record) []byte {
	start := len(b)
	b = append(b, make([]byte, frameHeaderBytes)...)
	b = appendRecord(b, r)
	payload := b[start+frameHeaderBytes:]
	binary.LittleEndian.PutUint32(b[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(b[start+4:], crc32.Checksum(payload, castagnoli))
	return b
}

// frameDamage says why the bytes at an offset are not an intact frame.
type frameDamage string

const (
	damageShortHeader frameDamage = "short frame header"
	damageLength      frameDamage = "impossible frame length"
	damageShort       frameDamage = "frame runs past the end of the file"
	damageChecksum    frameDamage = "checksum mismatch"
)

// nextFrame reads the frame at the start of b. It returns the payload and
// the frame's total size, or the damage that stops reading. It never
// looks past len(b).
func nextFrame(b []byte) (payload []byte, size int, damage frameDamage) {
	if len(b) < frameHeaderBytes {
		return nil, 0, damageShortHeader
	}
	n := binary.LittleEndian.Uint32(b)
	if n == 0 || n > MaxRecordBytes {
		return nil, 0, damageLength
	}
	if uint64(n) > uint64(len(b)-frameHeaderBytes) {
		return nil, 0, damageShort
	}
	payload = b[frameHeaderBytes : frameHeaderBytes+int(n)]
	if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(b[4:]) {
		return nil, 0, damageChecksum
	}
	return payload, frameHeaderBytes + int(n), ""
}
