// Package all imports every shepherd replica driver for its side effect:
// each registers itself with package driver in its init. Import it (as
// _) where drivers are looked up by name.
package all

import (
	_ "github.com/shepherd-db/shepherd/internal/driver/duckdb"   // registers "duckdb"
	_ "github.com/shepherd-db/shepherd/internal/driver/mysql"    // registers "mysql"
	_ "github.com/shepherd-db/shepherd/internal/driver/postgres" // registers "postgres"
	_ "github.com/shepherd-db/shepherd/internal/driver/sqlite"   // registers "sqlite" and, with cgo, "sqlite-cgo"
)
