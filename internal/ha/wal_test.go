package ha

import "github.com/shepherd-db/shepherd/internal/cluster"

// The cluster writes its decided transactions to a cluster.WAL: the local
// log or this one, without knowing which.
var _ cluster.WAL = (*Log)(nil)
