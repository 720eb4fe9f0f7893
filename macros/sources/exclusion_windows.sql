{#
  The exclusion windows people declared (goodput-loader exclusions add; or rows
  written into <goodput_raw_schema>.exclusion_windows by any other means): run
  (a run_id or a run name; null for every run), start_at, end_at (UTC
  timestamps), reason. Without that table there are none, and the exclusion
  models are empty rather than failing the build of a warehouse that never
  declared any (a log-sink fed BigQuery dataset, say).
#}

{% macro goodput_exclusion_rows() -%}
  {%- set relation = none -%}
  {%- if execute -%}
    {%- set relation = adapter.get_relation(database=var('goodput_raw_database', target.database),
                                            schema=var('goodput_raw_schema', 'goodput_raw'),
                                            identifier='exclusion_windows') -%}
  {%- endif -%}
  {%- if relation is not none %}
    select
        nullif(run, '') as run,
        {{ goodput_timestamp_to_epoch_us('start_at') }} / 1000000.0 as start_epoch,
        {{ goodput_timestamp_to_epoch_us('end_at') }} / 1000000.0 as end_epoch,
        reason
    from {{ relation }}
  {%- else %}
    select
        cast(null as {{ dbt.type_string() }}) as run,
        cast(null as {{ dbt.type_float() }}) as start_epoch,
        cast(null as {{ dbt.type_float() }}) as end_epoch,
        cast(null as {{ dbt.type_string() }}) as reason
    from (select 1 as one) as nothing
    where one = 0
  {%- endif %}
{%- endmacro %}
