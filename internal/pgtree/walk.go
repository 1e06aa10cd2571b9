// Package pgtree walks the parse trees of PostgreSQL's parser (pg_query)
// generically, through protobuf reflection, for the analyses that look
// for a kind of node wherever it stands.
package pgtree

import "google.golang.org/protobuf/reflect/protoreflect"

// Walk calls visit for m and, depth first in field order, for every
// message below it for which visit of its parent returned true: visit
// returns whether to go into the message's fields. A walk that found
// what it looked for stops by returning false from then on.
func Walk(m protoreflect.Message, visit func(protoreflect.Message) bool) {
	if !visit(m) {
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.Kind() != protoreflect.MessageKind, fd.IsMap():
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				Walk(l.Get(i).Message(), visit)
			}
		default:
			Walk(v.Message(), visit)
		}
		return true
	})
}
