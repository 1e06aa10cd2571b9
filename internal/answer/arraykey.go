package answer

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
)

// ArraySortKey is a one-dimensional array's sort key: bytes that compare
// (bytewise, as SQLite and DuckDB compare BLOBs) as PostgreSQL's array
// comparison orders the arrays, for the elements' text as the canonical
// text holds it (ParseArray) and elem the element type's kind: "int"
// (integers in decimal), "bool" (t or f) or "text" (text compared byte
// by byte, PostgreSQL's C collation).
//
// PostgreSQL's btarraycmp compares the elements in order, a NULL element
// after every value; when one array is a prefix of the other, the
// shorter (the empty array has no dimension) is the smaller. So each
// element is a marker byte, 1 for a value and 2 for NULL, then the value:
// an integer as 8 big-endian bytes with the sign bit flipped, a boolean
// as 0 or 1, a text's bytes ended by a 0 byte (PostgreSQL text holds no
// 0 byte). The key starts with a 1 byte, so that no key is empty (the
// cgo SQLite driver returns an empty BLOB as NULL).
func ArraySortKey(items []*string, elem string) ([]byte, error) {
	key := make([]byte, 1, 1+9*len(items))
	key[0] = 1
	for _, it := range items {
		if it == nil {
			key = append(key, 2)
			continue
		}
		key = append(key, 1)
		switch elem {
		case "int":
			n, err := strconv.ParseInt(*it, 10, 64)
			if err != nil {
				return nil, errArrayKey
			}
			key = binary.BigEndian.AppendUint64(key, uint64(n)^1<<63)
		case "bool":
			switch *it {
			case "f":
				key = append(key, 0)
			case "t":
				key = append(key, 1)
			default:
				return nil, errArrayKey
			}
		case "text":
			if strings.IndexByte(*it, 0) >= 0 {
				return nil, errArrayKey
			}
			key = append(append(key, *it...), 0)
		default:
			return nil, errArrayKey
		}
	}
	return key, nil
}

// ArrayFromSortKey is the canonical text of the array whose sort key is
// key (ArraySortKey's inverse).
func ArrayFromSortKey(key []byte, elem string) (string, error) {
	if len(key) == 0 || key[0] != 1 {
		return "", errArrayKey
	}
	key = key[1:]
	var items []*string
	for len(key) > 0 {
		marker := key[0]
		key = key[1:]
		if marker == 2 {
			items = append(items, nil)
			continue
		}
		if marker != 1 {
			return "", errArrayKey
		}
		var v string
		switch elem {
		case "int":
			if len(key) < 8 {
				return "", errArrayKey
			}
			v = strconv.FormatInt(int64(binary.BigEndian.Uint64(key)^1<<63), 10)
			key = key[8:]
		case "bool":
			if len(key) < 1 || key[0] > 1 {
				return "", errArrayKey
			}
			v = map[byte]string{0: "f", 1: "t"}[key[0]]
			key = key[1:]
		case "text":
			end := strings.IndexByte(string(key), 0)
			if end < 0 {
				return "", errArrayKey
			}
			v = string(key[:end])
			key = key[end+1:]
		default:
			return "", errArrayKey
		}
		items = append(items, &v)
	}
	return FormatArray(items), nil
}

var errArrayKey = errors.New("shepherd: malformed array sort key")
