{#
  Types that the warehouses spell differently.

  goodput_exact(expr): a float64 as a fixed-point number, so that running sums
  of it are exact. int_goodput__timeline_curves adds every span's slope where
  the span starts and subtracts the same value where it ends; in float64 the
  running sum would keep a rounding residue after each span (and carry it
  along the run), in fixed point it returns to exactly zero.

  DuckDB: DECIMAL(38, 18) (128-bit; up to 1e20, and a cast beyond that fails
  loudly rather than rounding). BigQuery: BIGNUMERIC (38 digits of scale).
#}

{% macro goodput_exact(expr) -%}
  {{ return(adapter.dispatch('goodput_exact', 'goodput_warehouse')(expr)) }}
{%- endmacro %}

{% macro default__goodput_exact(expr) -%}
  cast({{ expr }} as decimal(38, 18))
{%- endmacro %}

{% macro bigquery__goodput_exact(expr) -%}
  cast({{ expr }} as bignumeric)
{%- endmacro %}

{#
  goodput_float(expr): expr as a 64-bit float. dbt.type_float() is FLOAT on
  DuckDB, which is 32 bits there (a configured ideal step time of 6.1 s
  became 6.099999904632568).
#}

{% macro goodput_float(expr) -%}
  {{ return(adapter.dispatch('goodput_float', 'goodput_warehouse')(expr)) }}
{%- endmacro %}

{% macro default__goodput_float(expr) -%}
  cast({{ expr }} as double)
{%- endmacro %}

{% macro bigquery__goodput_float(expr) -%}
  cast({{ expr }} as float64)
{%- endmacro %}

{#
  goodput_string_literal(value): value as a SQL string literal of the target,
  for text that comes from a user (a run name, an --as-of time). Standard SQL
  doubles a quote; BigQuery escapes with a backslash, where a doubled quote
  ends the literal and starts another one, and a raw newline is not allowed.
#}

{% macro goodput_string_literal(value) -%}
  {{ return(adapter.dispatch('goodput_string_literal', 'goodput_warehouse')(value)) }}
{%- endmacro %}

{% macro default__goodput_string_literal(value) -%}
  '{{ value | string | replace("'", "''") }}'
{%- endmacro %}

{% macro bigquery__goodput_string_literal(value) -%}
  '{{ value | string | replace("\\", "\\\\") | replace("'", "\\'") | replace("\n", "\\n") | replace("\r", "\\r") }}'
{%- endmacro %}
