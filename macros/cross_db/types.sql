{#
  Types that the warehouses spell differently.

  goodput_exact(expr): a float64 as a fixed-point number, so that running sums
  of it are exact; goodput_exact_to_float(expr) turns such a number (or a sum
  of them) back into a float64. int_goodput__timeline_curves adds every span's
  slope where the span starts and subtracts the same value where it ends; in
  float64 the running sum would keep a rounding residue after each span (and
  carry it along the run), in fixed point it returns to exactly zero.

  DuckDB: a HUGEINT (128-bit) count of 2^-60 (up to 1.4e20; a cast beyond that
  fails loudly rather than rounding). A binary fixed point, because DuckDB
  turns a DECIMAL(38, 18) back into a double by a 128-bit division by 10^18
  (0.45 us a value, 4.4M breakpoints at L); a count of 2^-60 converts by a
  128-bit to double cast and a scaling that is exact in binary (the cast is
  within an ulp, as the decimal one was). timeline_curves at L: 9.8 -> 8.2 s
  in the hourly build (bench/RESULTS.md). BigQuery: BIGNUMERIC (38 digits of
  scale). Other warehouses: DECIMAL(38, 18).
#}

{% macro goodput_exact(expr) -%}
  {{ return(adapter.dispatch('goodput_exact', 'goodput_warehouse')(expr)) }}
{%- endmacro %}

{% macro default__goodput_exact(expr) -%}
  cast({{ expr }} as decimal(38, 18))
{%- endmacro %}

{% macro duckdb__goodput_exact(expr) -%}
  cast(({{ expr }}) * {{ goodput_exact_unit_inverse() }} as hugeint)
{%- endmacro %}

{% macro bigquery__goodput_exact(expr) -%}
  cast({{ expr }} as bignumeric)
{%- endmacro %}

{% macro goodput_exact_to_float(expr) -%}
  {{ return(adapter.dispatch('goodput_exact_to_float', 'goodput_warehouse')(expr)) }}
{%- endmacro %}

{% macro default__goodput_exact_to_float(expr) -%}
  {{ goodput_float(expr) }}
{%- endmacro %}

{% macro duckdb__goodput_exact_to_float(expr) -%}
  ({{ goodput_float(expr) }} / {{ goodput_exact_unit_inverse() }})
{%- endmacro %}

{#- 2^60, the number of DuckDB's fixed-point units in one, as a double (a power of two: scaling by it is exact) -#}
{% macro goodput_exact_unit_inverse() -%}
  cast(1152921504606846976 as double)
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
