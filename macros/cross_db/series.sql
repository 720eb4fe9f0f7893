{#
  A join that adds one row per value of an integer series to every row of
  the relation before it: `from runs {{ goodput_join_series('first_end', 'last_end', 60, 'grid_end') }}`.
  DuckDB unnests generate_series (inclusive); BigQuery unnests generate_array
  (inclusive, at most 1,048,575 elements per row: a 60 s grid covers two years).
#}

{% macro goodput_join_series(start_expr, stop_expr, step, column) -%}
  {{ return(adapter.dispatch('goodput_join_series', 'goodput_warehouse')(start_expr, stop_expr, step, column)) }}
{%- endmacro %}

{% macro default__goodput_join_series(start_expr, stop_expr, step, column) -%}
  cross join unnest(generate_series({{ start_expr }}, {{ stop_expr }}, {{ step }})) as series({{ column }})
{%- endmacro %}

{% macro bigquery__goodput_join_series(start_expr, stop_expr, step, column) -%}
  cross join unnest(generate_array({{ start_expr }}, {{ stop_expr }}, {{ step }})) as {{ column }}
{%- endmacro %}
