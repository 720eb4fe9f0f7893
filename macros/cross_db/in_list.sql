{#
  column in (literals), written as each warehouse filters it fastest at the scan.

  DuckDB 1.5 pushes an IN list into a table scan only as an "optional"
  filter, and the scan then reads every row group: the 3 running runs of a
  200-run table came out of all 10M rows (0.5 s). An OR of one-value ranges is
  a real scan filter, checked against each row group's min/max, and the
  per-run tables are stored in run order, so the scan reads only those runs'
  groups (0.2 s). Past a few values the ORs cost more than they skip (8 runs
  spread over the table: even; 16: 1.2 s against 0.6 s), so lists of more
  than 4 stay IN.
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
