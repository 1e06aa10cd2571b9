// Package answer defines the one form in which every replica driver returns
// the result of a statement, so that answers from different engines can be
// voted on and sent to clients the same way.
//
// Values travel as PostgreSQL text (the way PostgreSQL itself would print
// them), tagged with a type family. The wire front turns them into text or
// binary wire values; Digest turns them into canonical bytes for voting.
//
// # Canonical form
//
// Digest compares meanings, not spellings: two values get the same
// canonical bytes exactly when they mean the same thing, whichever engine
// printed them. Every value is read in a family, which is the value's own
// (SQLite types values one by one), else its column's; DigestWith's hints
// may re-read text (below). The canonical form falls in one of three
// domains, so values of different families that can stand for the same
// thing compare equal:
//
//   - NULL: its own domain; never equal to "" or to the text "NULL".
//   - Numbers: Int, Numeric, Float and Bool. A number is its exact
//     decimal value: sign, significant digits, power of ten. Width and
//     scale do not count (int2 7 = int8 7; 1.50 = 1.5; 3.00 = 3), but
//     every digit does (1.5 ≠ 1.49). A Float is the shortest decimal
//     that reads back as the same float, at the column's width: float4
//     (OID 700, from the column or a hint) is read as a float32, so a
//     real 0.1 is 0.1 however many digits an engine printed, and a
//     float equals the decimal it prints as (a SQLite REAL 1.5 = numeric
//     1.50; an integral float equals the integer up to 2^53). -0 is 0;
//     NaN, +Infinity and -Infinity are values of their own, the same in
//     numeric and float. A Bool is 1 or 0 (t, true, yes, on, 1 / f,
//     false, no, off, 0), so PostgreSQL's t for a > b equals MariaDB's
//     and SQLite's 1.
//   - Strings: everything else, as bytes, with no Unicode normalisation
//     and no repair of invalid UTF-8 (different bytes stay different).
//     Text, Bytes (raw bytes, not PostgreSQL's \x hex) and Interval are
//     compared as they are, so text and bytea with the same bytes are
//     equal and a trailing space counts. In a character(n) column (OID
//     1042, from the column or a hint) trailing spaces are padding and
//     are dropped: PostgreSQL pads, MariaDB strips, SQLite keeps what
//     was stored. The other families are rewritten to one spelling:
//     UUIDs as 8-4-4-4-12 lower-case hex (braces, upper case, missing
//     hyphens accepted); JSON without white space, object keys sorted
//     bytewise with the last of duplicate keys kept (as jsonb does),
//     strings with only the escapes JSON requires, numbers as digits
//     and a power of ten ("15e-1" for 1.5, 1.50 and 0.15E1); dates as
//     YYYY-MM-DD; times as HH:MM:SS; timestamps, with and without time
//     zone alike (MariaDB has no timestamptz), as the instant in UTC,
//     YYYY-MM-DD HH:MM:SS. Fractions of a second are written without
//     trailing zeros (none for whole seconds), years before 1 with
//     " BC", infinity and -infinity as such. A timestamptz's offset is
//     applied (12:00+02 = 10:00+00); a timestamp without time zone
//     drops one written into its text, keeping the clock, as
//     PostgreSQL does. Date and time text is read in PostgreSQL's ISO
//     output and in what SQLite and its drivers write: "T" or a space
//     between date and time, "Z" or offsets ±HH, ±HHMM, ±HH:MM, seconds
//     and fraction optional; fields are range-checked ("2026-02-30" is
//     no date) and 24:00:00 and a leap second roll over as in
//     PostgreSQL.
//
// A value that is not valid in its family (a Numeric "abc", a Date
// "2026-13-01") is compared as its text, in the string domain.
//
// Hints. SQLite gives an expression column no declared type, so its
// values come with the storage class only: a timestamp computed by an
// expression is text, and without more knowledge it is compared as text
// (it then matches a PostgreSQL timestamp only when spelled exactly in
// canonical form). MariaDB likewise reports a JSON column as text.
// Nothing is sniffed from the text itself, which would make distinct
// texts equal. DigestWith takes what the caller knows about the
// statement's columns in PostgreSQL terms (from the catalogue or the
// statement's analysis) and reads values the engine typed as text or
// not at all as the hinted family; a hinted character(n) or real also
// brings its padding and float32 rules, and a hinted timestamptz makes
// a timestamp's offset count. The same hints must be applied to every
// replica's answer to the statement.
//
// Rows are compared as a multiset unless the digest is ordered; the
// command verb, the row count and the number of columns count too;
// column names and engine type details do not.
package answer
