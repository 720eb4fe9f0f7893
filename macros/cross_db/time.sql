{#
  Epoch seconds <-> TIMESTAMP. The recorder writes epoch seconds as float64;
  models keep those doubles for arithmetic (exactly what the library computes
  with) and convert to TIMESTAMP (microseconds, UTC) only for display and joins.
#}

{% macro goodput_epoch_to_timestamp(expr) -%}
  {{ return(adapter.dispatch('goodput_epoch_to_timestamp', 'goodput_warehouse')(expr)) }}
{%- endmacro %}

{% macro default__goodput_epoch_to_timestamp(expr) -%}
  make_timestamp(cast(round(({{ expr }}) * 1000000) as bigint))
{%- endmacro %}

{% macro bigquery__goodput_epoch_to_timestamp(expr) -%}
  timestamp_micros(cast(round(({{ expr }}) * 1000000) as int64))
{%- endmacro %}

{#- The UTC date of an epoch (a timestamp cast to date is its UTC day on both warehouses). -#}
{% macro goodput_epoch_to_date(expr) -%}
  cast({{ goodput_epoch_to_timestamp(expr) }} as date)
{%- endmacro %}


{% macro goodput_timestamp_to_epoch(expr) -%}
  {{ return(adapter.dispatch('goodput_timestamp_to_epoch', 'goodput_warehouse')(expr)) }}
{%- endmacro %}

{% macro default__goodput_timestamp_to_epoch(expr) -%}
  (epoch_us({{ expr }}) / 1000000.0)
{%- endmacro %}

{% macro bigquery__goodput_timestamp_to_epoch(expr) -%}
  (unix_micros({{ expr }}) / 1000000.0)
{%- endmacro %}


{#
  An ISO 8601 literal (UTC when it has no offset) as epoch seconds.
#}
{% macro goodput_iso_to_epoch(iso) -%}
  ({{ goodput_iso_text_to_epoch_us(goodput_string_literal(iso)) }} / 1000000.0)
{%- endmacro %}

{#- An ISO 8601 literal -> epoch microseconds (an exact integer, to compare with TIMESTAMP columns). -#}
{% macro goodput_iso_to_epoch_us(iso) -%}
  {{ goodput_iso_text_to_epoch_us(goodput_string_literal(iso)) }}
{%- endmacro %}

{#-
  A string expression holding ISO 8601 (UTC when it has no offset) -> epoch
  microseconds: the one conversion behind the two above, and behind a
  library-windows file's times (read at run time, macros/library_windows).
-#}
{% macro goodput_iso_text_to_epoch_us(expression) -%}
  {{ return(adapter.dispatch('goodput_iso_text_to_epoch_us', 'goodput_warehouse')(expression)) }}
{%- endmacro %}

{% macro default__goodput_iso_text_to_epoch_us(expression) -%}
  epoch_us(cast({{ expression }} as timestamptz))
{%- endmacro %}

{% macro bigquery__goodput_iso_text_to_epoch_us(expression) -%}
  unix_micros(timestamp({{ expression }}))
{%- endmacro %}


{#
  The evaluation time of runs that have not ended, as epoch seconds.
  var('goodput_as_of') when set (goodput-loader build --as-of), otherwise the
  start of this dbt invocation: one instant for every model of the run, so a
  build never mixes two "nows".
#}
{% macro goodput_as_of_epoch() -%}
  {%- set as_of = var('goodput_as_of', none) -%}
  {%- if as_of is none or as_of == '' -%}
    {%- set as_of = run_started_at.strftime('%Y-%m-%dT%H:%M:%S.%fZ') -%}
  {%- endif -%}
  {{ return(goodput_iso_to_epoch(as_of)) }}
{%- endmacro %}


{#- TIMESTAMP -> epoch microseconds (an exact integer: the build watermark). -#}
{% macro goodput_timestamp_to_epoch_us(expr) -%}
  {{ return(adapter.dispatch('goodput_timestamp_to_epoch_us', 'goodput_warehouse')(expr)) }}
{%- endmacro %}

{% macro default__goodput_timestamp_to_epoch_us(expr) -%}
  epoch_us({{ expr }})
{%- endmacro %}

{% macro bigquery__goodput_timestamp_to_epoch_us(expr) -%}
  unix_micros({{ expr }})
{%- endmacro %}


{#- Epoch seconds rounded to the microsecond, as the library's datetimes (datetime.fromtimestamp) keep them. -#}
{% macro goodput_epoch_to_microseconds(x) -%}
  ((floor({{ x }}) * 1000000 + round(({{ x }} - floor({{ x }})) * 1000000)) / 1000000.0)
{%- endmacro %}
