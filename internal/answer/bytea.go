package answer

import (
	"encoding/hex"
	"strings"
)

// ParseBytea decodes bytea's text input forms, hex ("\x0a0b") and the
// older escape form ("a\\b\012"), into raw bytes, as PostgreSQL reads a
// bytea constant or untyped parameter. ok is false for text that is
// neither.
func ParseBytea(s string) (raw string, ok bool) {
	if rest, isHex := strings.CutPrefix(s, `\x`); isHex {
		b, err := hex.DecodeString(rest)
		if err != nil {
			return "", false
		}
		return string(b), true
	}
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			out.WriteByte(s[i])
			continue
		}
		switch {
		case i+1 < len(s) && s[i+1] == '\\':
			out.WriteByte('\\')
			i++
		case i+3 < len(s) && isOctal(s[i+1], '3') && isOctal(s[i+2], '7') && isOctal(s[i+3], '7'):
			out.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
		default:
			return "", false
		}
	}
	return out.String(), true
}

func isOctal(b, highest byte) bool { return b >= '0' && b <= highest }
