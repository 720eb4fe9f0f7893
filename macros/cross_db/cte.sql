{#
  `name as {{ goodput_cte_read_in_place() }} (...)`: a CTE whose readers each
  read the stored table under it themselves.

  DuckDB materializes a CTE that its query reads more than once: every
  projected column of every row, before any reader's filter applies. An
  import CTE over a large stored table whose readers each want a few columns
  of a few rows (each kind of boundary event, the last breakpoints before a
  point, the stored rows before a cut) pays for copying the whole run first.
  Read in place, each reader's scan keeps only its columns and pushes its own
  filter. At L's hourly build (2026-12-07, same rows): the paired intervals'
  entries 0.41 -> 0.26 s, the latest windows' curves 0.36 -> 0.18 s, the
  rolling grid's 0.74 -> 0.52 s, the curves' stored rows 0.93 -> 0.79 s.
  Not for a CTE that computes much (a large join, a union, a window): each
  reader would compute it again.
  BigQuery never materializes a non-recursive CTE: nothing to say there.
#}

{% macro goodput_cte_read_in_place() -%}
  {{ return(adapter.dispatch('goodput_cte_read_in_place', 'goodput_warehouse')()) }}
{%- endmacro %}

{% macro default__goodput_cte_read_in_place() -%}
{%- endmacro %}

{% macro duckdb__goodput_cte_read_in_place() -%}
  not materialized
{%- endmacro %}
