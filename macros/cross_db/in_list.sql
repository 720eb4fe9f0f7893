{#
  column in (literals), written as each warehouse filters it fastest at the scan.

  DuckDB 1.5 pushes an IN list of strings into a table scan only as an
  "optional" filter: the scan returns every row with all its projected
  columns and a later filter drops them (3 running runs of a 200-run table
  came out of all 10M rows of int_goodput__entries_ordered: 0.5 s). An OR of
  one-value ranges is a real scan filter: the run_id column is compared at
  the scan and the other columns are read only for the rows that pass
  (0.2 s). Past a few values the ORs cost more than they save (8 runs spread
  over the table: even; 16: 1.2 s against 0.6 s), so lists of more than 4
  stay IN.
  On run_id the scan does not skip other runs' row groups by their min/max:
  DuckDB keeps only the first 8 bytes of a string's min and max, and the run
  ids of a fleet in one project share more than that ("bench/sim-197": every
  group's min and max are "bench/si"). Such a filter reads the whole run_id
  column (about 0.1 s for 13M rows). A range around the list (run_id between
  its least and greatest) made that cheaper only when the rebuilt runs sit
  next to each other in run_id order: the 200-run hourly build went
  12.7-17.4 s -> 11.2-15.6 s with the 3 running runs last, but 12.4-13.1 s ->
  14.6-15.9 s with them spread (alone; with the ORs inside it 14.0-16.1 s),
  so it is not used. The large per-run tables carry an integer run key for
  that (macros/cross_db/run_key.sql): their filters read only the rebuilt
  runs' row groups.
  BigQuery prunes an IN list on a clustered column as it is.
#}

{% macro goodput_in_list(column, literals) -%}
  {{ return(adapter.dispatch('goodput_in_list', 'goodput_warehouse')(column, literals)) }}
{%- endmacro %}

{% macro default__goodput_in_list(column, literals) -%}
  {{ return(column ~ " in (" ~ literals | join(", ") ~ ")") }}
{%- endmacro %}

{% macro duckdb__goodput_in_list(column, literals) -%}
  {%- if literals | length > 4 -%}{{ return(default__goodput_in_list(column, literals)) }}{%- endif -%}
  {%- set ranges = [] -%}
  {%- for literal in literals -%}
    {%- do ranges.append("(" ~ column ~ " >= " ~ literal ~ " and " ~ column ~ " <= " ~ literal ~ ")") -%}
  {%- endfor -%}
  {{ return("(" ~ ranges | join(" or ") ~ ")") }}
{%- endmacro %}
