package pgfunc

// spec is the catalogue: one line per overload, as PostgreSQL 15's
// pg_proc has it (TestCatalogueMatchesPostgres checks every line against
// the server):
//
//	name(argument types) result [agg|win] [same|math] [my=NAME]
//
// Types are PostgreSQL's internal names (int4, _text for text[]); an
// argument written ...t is VARIADIC (t an array type: its elements), one
// written t? has a default (a call may leave it and those after out).
// Overloads over types shepherd cannot hold (money, inet, bit, ranges,
// ...) are left out: no expression shepherd types has them. "same" marks
// the overloads every engine writes as they are (the name in capitals);
// "math" those MariaDB and SQLite's math functions write so; my=NAME is
// MariaDB's name where it differs. The engines compute those in double
// precision: of numeric, only the exact ones (ceil, floor, sign) are
// marked; exp, ln, sqrt and power of numeric have digits of PostgreSQL's
// numeric rules (exp(1.0) is 2.7182818284590452) and are refused.
const spec = `
abs(float4) float4 same
abs(float8) float8 same
abs(int2) int2 same
abs(int4) int4 same
abs(int8) int8 same
abs(numeric) numeric same
acos(float8) float8
age(timestamp) interval
age(timestamptz) interval
age(timestamp,timestamp) interval
age(timestamptz,timestamptz) interval
array_agg(anyarray) anyarray agg
array_agg(anynonarray) anyarray agg
array_length(anyarray,int4) int4
array_to_json(anyarray) json
array_to_json(anyarray,bool) json
array_to_string(anyarray,text) text
array_to_string(anyarray,text,text) text
ascii(text) int4
asin(float8) float8
atan(float8) float8
atan2(float8,float8) float8
avg(float4) float8 agg same
avg(float8) float8 agg same
avg(int2) numeric agg same
avg(int4) numeric agg same
avg(int8) numeric agg same
avg(interval) interval agg same
avg(numeric) numeric agg same
bit_and(int2) int2 agg
bit_and(int4) int4 agg
bit_and(int8) int8 agg
bit_length(bytea) int4
bit_length(text) int4
bit_or(int2) int2 agg
bit_or(int4) int4 agg
bit_or(int8) int8 agg
bit_xor(int2) int2 agg
bit_xor(int4) int4 agg
bit_xor(int8) int8 agg
bool_and(bool) bool agg
bool_or(bool) bool agg
btrim(text) text
btrim(bytea,bytea) bytea
btrim(text,text) text
cardinality(anyarray) int4
cbrt(float8) float8
ceil(float8) float8 math
ceil(numeric) numeric math
ceiling(float8) float8 math
ceiling(numeric) numeric math
char_length(bpchar) int4
char_length(text) int4
character_length(bpchar) int4
character_length(text) int4
chr(int4) text
clock_timestamp() timestamptz
concat(...any) text
concat_ws(text,...any) text
corr(float8,float8) float8 agg
cos(float8) float8
cosd(float8) float8
cot(float8) float8
count() int8 agg same
count(any) int8 agg same
covar_pop(float8,float8) float8 agg
covar_samp(float8,float8) float8 agg
cume_dist() float8 win
current_setting(text) text
current_setting(text,bool) text
currval(regclass) int8
date(timestamp) date
date(timestamptz) date
date_part(text,date) float8
date_part(text,interval) float8
date_part(text,time) float8
date_part(text,timestamp) float8
date_part(text,timestamptz) float8
date_part(text,timetz) float8
date_trunc(text,interval) interval
date_trunc(text,timestamp) timestamp
date_trunc(text,timestamptz) timestamptz
date_trunc(text,timestamptz,text) timestamptz
decode(text,text) bytea
degrees(float8) float8
dense_rank() int8 win same
div(numeric,numeric) numeric
encode(bytea,text) text
every(bool) bool agg
exp(float8) float8 math
exp(numeric) numeric
extract(text,date) numeric
extract(text,interval) numeric
extract(text,time) numeric
extract(text,timestamp) numeric
extract(text,timestamptz) numeric
extract(text,timetz) numeric
factorial(int8) numeric
first_value(anyelement) anyelement win same
floor(float8) float8 math
floor(numeric) numeric math
format(text) text
format(text,...any) text
gcd(int4,int4) int4
gcd(int8,int8) int8
gcd(numeric,numeric) numeric
gen_random_uuid() uuid
initcap(text) text
isfinite(date) bool
isfinite(interval) bool
isfinite(timestamp) bool
isfinite(timestamptz) bool
json_agg(anyelement) json agg
json_array_length(json) int4
json_build_array() json
json_build_array(...any) json
json_build_object() json
json_build_object(...any) json
json_extract_path_text(json,..._text) text
json_object_agg(any,any) json agg
json_typeof(json) text
jsonb_agg(anyelement) jsonb agg
jsonb_array_length(jsonb) int4
jsonb_build_array() jsonb
jsonb_build_array(...any) jsonb
jsonb_build_object() jsonb
jsonb_build_object(...any) jsonb
jsonb_extract_path_text(jsonb,..._text) text
jsonb_object_agg(any,any) jsonb agg
jsonb_pretty(jsonb) text
jsonb_set(jsonb,_text,jsonb,bool?) jsonb
jsonb_strip_nulls(jsonb) jsonb
jsonb_typeof(jsonb) text
justify_days(interval) interval
justify_hours(interval) interval
justify_interval(interval) interval
lag(anyelement) anyelement win same
lag(anyelement,int4) anyelement win same
lag(anycompatible,int4,anycompatible) anycompatible win
last_value(anyelement) anyelement win same
lastval() int8
lcm(int4,int4) int4
lcm(int8,int8) int8
lcm(numeric,numeric) numeric
lead(anyelement) anyelement win same
lead(anyelement,int4) anyelement win same
lead(anycompatible,int4,anycompatible) anycompatible win
left(text,int4) text
length(bpchar) int4
length(bytea) int4
length(text) int4
length(bytea,name) int4
like_escape(bytea,bytea) bytea
like_escape(text,text) text
ln(float8) float8 math
ln(numeric) numeric
log(float8) float8
log(numeric) numeric
log(numeric,numeric) numeric
log10(float8) float8
log10(numeric) numeric
lower(text) text
lpad(text,int4) text
lpad(text,int4,text) text
ltrim(text) text
ltrim(bytea,bytea) bytea
ltrim(text,text) text
make_date(int4,int4,int4) date
make_interval(int4?,int4?,int4?,int4?,int4?,int4?,float8?) interval
make_time(int4,int4,float8) time
make_timestamp(int4,int4,int4,int4,int4,float8) timestamp
make_timestamptz(int4,int4,int4,int4,int4,float8) timestamptz
make_timestamptz(int4,int4,int4,int4,int4,float8,text) timestamptz
max(anyarray) anyarray agg same
max(bpchar) bpchar agg same
max(date) date agg same
max(float4) float4 agg same
max(float8) float8 agg same
max(int2) int2 agg same
max(int4) int4 agg same
max(int8) int8 agg same
max(interval) interval agg same
max(numeric) numeric agg same
max(text) text agg same
max(time) time agg same
max(timestamp) timestamp agg same
max(timestamptz) timestamptz agg same
max(timetz) timetz agg same
md5(bytea) text
md5(text) text
min(anyarray) anyarray agg same
min(bpchar) bpchar agg same
min(date) date agg same
min(float4) float4 agg same
min(float8) float8 agg same
min(int2) int2 agg same
min(int4) int4 agg same
min(int8) int8 agg same
min(interval) interval agg same
min(numeric) numeric agg same
min(text) text agg same
min(time) time agg same
min(timestamp) timestamp agg same
min(timestamptz) timestamptz agg same
min(timetz) timetz agg same
min_scale(numeric) int4
mod(int2,int2) int2
mod(int4,int4) int4
mod(int8,int8) int8
mod(numeric,numeric) numeric
nextval(regclass) int8
now() timestamptz
nth_value(anyelement,int4) anyelement win
ntile(int4) int4 win same
num_nonnulls(...any) int4
num_nulls(...any) int4
octet_length(bpchar) int4
octet_length(bytea) int4
octet_length(text) int4
overlay(bytea,bytea,int4) bytea
overlay(text,text,int4) text
overlay(bytea,bytea,int4,int4) bytea
overlay(text,text,int4,int4) text
percent_rank() float8 win
pi() float8 math
position(bytea,bytea) int4
position(text,text) int4
pow(float8,float8) float8
pow(numeric,numeric) numeric
power(float8,float8) float8 math my=POW
power(numeric,numeric) numeric
quote_ident(text) text
quote_literal(anyelement) text
quote_literal(text) text
quote_nullable(anyelement) text
quote_nullable(text) text
radians(float8) float8
random() float8
rank() int8 win same
regexp_count(text,text) int4
regexp_count(text,text,int4) int4
regexp_count(text,text,int4,text) int4
regexp_like(text,text) bool
regexp_like(text,text,text) bool
regexp_replace(text,text,text) text
regexp_replace(text,text,text,int4) text
regexp_replace(text,text,text,text) text
regexp_replace(text,text,text,int4,int4) text
regexp_replace(text,text,text,int4,int4,text) text
regexp_substr(text,text) text
regexp_substr(text,text,int4) text
regexp_substr(text,text,int4,int4) text
regexp_substr(text,text,int4,int4,text) text
regexp_substr(text,text,int4,int4,text,int4) text
regr_avgx(float8,float8) float8 agg
regr_avgy(float8,float8) float8 agg
regr_count(float8,float8) int8 agg
regr_intercept(float8,float8) float8 agg
regr_r2(float8,float8) float8 agg
regr_slope(float8,float8) float8 agg
regr_sxx(float8,float8) float8 agg
regr_sxy(float8,float8) float8 agg
regr_syy(float8,float8) float8 agg
repeat(text,int4) text
replace(text,text,text) text same
reverse(text) text
right(text,int4) text
round(float8) float8
round(numeric) numeric
round(numeric,int4) numeric
row_number() int8 win same
row_to_json(record) json
row_to_json(record,bool) json
rpad(text,int4) text
rpad(text,int4,text) text
rtrim(text) text
rtrim(bytea,bytea) bytea
rtrim(text,text) text
scale(numeric) int4
setval(regclass,int8) int8
setval(regclass,int8,bool) int8
sha224(bytea) bytea
sha256(bytea) bytea
sha384(bytea) bytea
sha512(bytea) bytea
sign(float8) float8 math
sign(numeric) numeric math
sin(float8) float8
sind(float8) float8
split_part(text,text,int4) text
sqrt(float8) float8 math
sqrt(numeric) numeric
starts_with(text,text) bool
statement_timestamp() timestamptz
stddev(float4) float8 agg
stddev(float8) float8 agg
stddev(int2) numeric agg
stddev(int4) numeric agg
stddev(int8) numeric agg
stddev(numeric) numeric agg
stddev_pop(float4) float8 agg
stddev_pop(float8) float8 agg
stddev_pop(int2) numeric agg
stddev_pop(int4) numeric agg
stddev_pop(int8) numeric agg
stddev_pop(numeric) numeric agg
stddev_samp(float4) float8 agg
stddev_samp(float8) float8 agg
stddev_samp(int2) numeric agg
stddev_samp(int4) numeric agg
stddev_samp(int8) numeric agg
stddev_samp(numeric) numeric agg
string_agg(bytea,bytea) bytea agg
string_agg(text,text) text agg
string_to_array(text,text) _text
string_to_array(text,text,text) _text
strpos(text,text) int4
substr(bytea,int4) bytea
substr(text,int4) text
substr(bytea,int4,int4) bytea
substr(text,int4,int4) text
substring(bytea,int4) bytea
substring(text,int4) text
substring(text,text) text
substring(bytea,int4,int4) bytea
substring(text,int4,int4) text
substring(text,text,text) text
sum(float4) float4 agg same
sum(float8) float8 agg same
sum(int2) int8 agg same
sum(int4) int8 agg same
sum(int8) numeric agg same
sum(interval) interval agg same
sum(numeric) numeric agg same
tan(float8) float8
tand(float8) float8
timeofday() text
timezone(interval,timestamp) timestamptz
timezone(interval,timestamptz) timestamp
timezone(interval,timetz) timetz
timezone(text,timestamp) timestamptz
timezone(text,timestamptz) timestamp
timezone(text,timetz) timetz
to_char(float4,text) text
to_char(float8,text) text
to_char(int4,text) text
to_char(int8,text) text
to_char(interval,text) text
to_char(numeric,text) text
to_char(timestamp,text) text
to_char(timestamptz,text) text
to_date(text,text) date
to_hex(int4) text
to_hex(int8) text
to_json(anyelement) json
to_jsonb(anyelement) jsonb
to_number(text,text) numeric
to_timestamp(float8) timestamptz
to_timestamp(text,text) timestamptz
transaction_timestamp() timestamptz
translate(text,text,text) text
trim_scale(numeric) numeric
trunc(float8) float8
trunc(numeric) numeric
trunc(numeric,int4) numeric
upper(text) text
uuid_generate_v4() uuid
var_pop(float4) float8 agg
var_pop(float8) float8 agg
var_pop(int2) numeric agg
var_pop(int4) numeric agg
var_pop(int8) numeric agg
var_pop(numeric) numeric agg
var_samp(float4) float8 agg
var_samp(float8) float8 agg
var_samp(int2) numeric agg
var_samp(int4) numeric agg
var_samp(int8) numeric agg
var_samp(numeric) numeric agg
variance(float4) float8 agg
variance(float8) float8 agg
variance(int2) numeric agg
variance(int4) numeric agg
variance(int8) numeric agg
variance(numeric) numeric agg
version() text
width_bucket(anycompatible,anycompatiblearray) int4
width_bucket(float8,float8,float8,int4) int4
width_bucket(numeric,numeric,numeric,int4) int4
`
