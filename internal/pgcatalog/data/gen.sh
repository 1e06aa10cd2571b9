#!/bin/sh
# gen.sh writes the files of this directory from a running PostgreSQL 15
# (an initdb'd cluster with nothing created in it):
#   relations.tsv      relation|column|type of each catalog relation
#                      shepherd keeps (domains given as their base type,
#                      as PostgreSQL describes result columns)
#   <relation>.tsv     the built-in rows of the relations that have some,
#                      in COPY text format, reg* columns as plain OIDs
# Usage: PSQL="psql -h host -p port -U postgres" sh gen.sh
set -eu
cd "$(dirname "$0")"
: "${PSQL:=psql}"
P="$PSQL -X -q -At -v ON_ERROR_STOP=1"

# Relations whose built-in rows are kept (the where clause picks them).
builtin="
pg_namespace|nspname not like 'pg_temp%' and nspname not like 'pg_toast_temp%'
pg_type|oid < 16384
pg_am|true
pg_proc|true
pg_operator|true
pg_opclass|true
pg_collation|collname in ('default','C','POSIX','ucs_basic')
pg_database|true
pg_authid|true
pg_roles|true
pg_user|true
pg_settings|name not in ('config_file','data_directory','hba_file','ident_file','port','unix_socket_directories','listen_addresses','external_pid_file')
pg_tablespace|true
pg_extension|true
pg_range|true
pg_language|true
pg_class|relnamespace in (11, (select oid from pg_namespace where nspname = 'information_schema')) and relkind in ('r','v')
pg_attribute|attnum > 0 and attrelid in (select oid from pg_class where relnamespace in (11, (select oid from pg_namespace where nspname = 'information_schema')) and relkind in ('r','v'))
information_schema.schemata|true
pg_description|objoid < 16384
pg_shdescription|true
pg_cast|true
pg_auth_members|true
pg_opfamily|true
pg_conversion|true
pg_ts_config|true
pg_ts_dict|true
pg_ts_parser|true
pg_ts_template|true
pg_aggregate|true
pg_init_privs|true
"
# Relations kept without built-in rows (shepherd fills the user's).
empty="pg_index pg_constraint pg_attrdef pg_sequence pg_depend
pg_inherits pg_trigger pg_policy pg_statistic_ext pg_publication
pg_publication_namespace pg_publication_rel pg_enum pg_rewrite
pg_foreign_table pg_partitioned_table pg_event_trigger pg_seclabel pg_seclabels
pg_foreign_data_wrapper pg_foreign_server pg_user_mapping pg_default_acl pg_largeobject_metadata
pg_transform pg_amop pg_amproc pg_statistic_ext_data pg_subscription pg_tables pg_indexes
pg_statio_all_tables pg_statio_user_tables pg_sequences
information_schema.tables information_schema.columns information_schema.views
information_schema.table_constraints information_schema.key_column_usage
information_schema.constraint_column_usage information_schema.referential_constraints
information_schema.check_constraints information_schema.sequences"

rels="$(echo "$builtin" | sed -n 's/|.*//p') $empty"
: > relations.tsv
for r in $rels; do
	case $r in *.*) full=$r ;; *) full=pg_catalog.$r ;; esac
	$P -c "select '$r', a.attname, coalesce(bt.typname, t.typname)
	from pg_attribute a join pg_type t on t.oid = a.atttypid
	left join pg_type bt on bt.oid = t.typbasetype and t.typtype = 'd'
	where a.attrelid = '$full'::regclass and a.attnum > 0 and not a.attisdropped
	order by a.attnum" >> relations.tsv
done

echo "$builtin" | while IFS='|' read -r r where; do
	[ -n "$r" ] || continue
	case $r in *.*) full=$r ;; *) full=pg_catalog.$r ;; esac
	cols=$($P -c "select string_agg(case when t.typname like 'reg%' and t.typname <> 'regproc[]' and t.typcategory <> 'A'
		then quote_ident(a.attname) || '::oid' else quote_ident(a.attname) end, ', ' order by a.attnum)
		from pg_attribute a join pg_type t on t.oid = a.atttypid
		where a.attrelid = '$full'::regclass and a.attnum > 0 and not a.attisdropped")
	$P -c "\\copy (select $cols from $full where $where order by 1) to '$r.tsv'"
done

$P -c "\\copy (select word, catcode, barelabel, catdesc, baredesc from pg_get_keywords() order by 1) to 'keywords.tsv'"
