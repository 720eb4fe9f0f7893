{#
  JSON extraction from the raw `payload` column, one implementation per warehouse.
  DuckDB stores payload as JSON text; BigQuery as a JSON value. Numbers are read
  from their JSON text, so a float64 comes back bit-for-bit as the recorder wrote it.
#}

{% macro goodput_json_number(column, key) -%}
  {{ return(adapter.dispatch('goodput_json_number', 'goodput_warehouse')(column, key)) }}
{%- endmacro %}

{% macro default__goodput_json_number(column, key) -%}
  try_cast(json_extract_string({{ column }}, '$.{{ key }}') as double)
{%- endmacro %}

{% macro bigquery__goodput_json_number(column, key) -%}
  lax_float64(json_query({{ column }}, '$.{{ key }}'))
{%- endmacro %}


{% macro goodput_json_string(column, key) -%}
  {{ return(adapter.dispatch('goodput_json_string', 'goodput_warehouse')(column, key)) }}
{%- endmacro %}

{% macro default__goodput_json_string(column, key) -%}
  json_extract_string({{ column }}, '$.{{ key }}')
{%- endmacro %}

{% macro bigquery__goodput_json_string(column, key) -%}
  json_value({{ column }}, '$.{{ key }}')
{%- endmacro %}


{% macro goodput_json_integer(column, key) -%}
  {{ return(adapter.dispatch('goodput_json_integer', 'goodput_warehouse')(column, key)) }}
{%- endmacro %}

{% macro default__goodput_json_integer(column, key) -%}
  try_cast({{ goodput_json_number(column, key) }} as bigint)
{%- endmacro %}

{% macro bigquery__goodput_json_integer(column, key) -%}
  safe_cast({{ goodput_json_number(column, key) }} as int64)
{%- endmacro %}
