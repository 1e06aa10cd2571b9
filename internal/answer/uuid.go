package answer

// appendUUID appends the canonical form of a UUID: 32 lower-case hex
// digits grouped 8-4-4-4-12, as PostgreSQL and MariaDB print it. It reads
// the forms PostgreSQL accepts: either case, braces around it, hyphens
// between groups of four digits or none.
func appendUUID(dst []byte, text string) ([]byte, bool) {
	s := text
	if len(s) >= 2 && s[0] == '{' && s[len(s)-1] == '}' {
		s = s[1 : len(s)-1]
	}
	var digits [32]byte
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '-' && n > 0 && n%4 == 0 && n < 32 && s[i-1] != '-':
			continue
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
		case 'A' <= c && c <= 'F':
			c += 'a' - 'A'
		default:
			return dst, false
		}
		if n == 32 {
			return dst, false
		}
		digits[n] = c
		n++
	}
	if n != 32 || s[len(s)-1] == '-' {
		return dst, false
	}
	dst = append(dst, digits[0:8]...)
	dst = append(dst, '-')
	dst = append(dst, digits[8:12]...)
	dst = append(dst, '-')
	dst = append(dst, digits[12:16]...)
	dst = append(dst, '-')
	dst = append(dst, digits[16:20]...)
	dst = append(dst, '-')
	return append(dst, digits[20:32]...), true
}
