{#
  Types that the warehouses spell differently.

  goodput_exact(expr): a float64 as a fixed-point number, so that running sums
  of it are exact. int_goodput__located_curves adds every span's slope where
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
