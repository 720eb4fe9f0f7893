{#
  Materialization settings that differ by warehouse, for model config() calls.

  Rolling marts are incremental everywhere. DuckDB replaces every row of a
  recomputed (run, window end) with delete+insert; BigQuery has no
  delete+insert, so it merges on the rows' full key (the models emit every
  measure of a recomputed window, so a merge replaces them all). Partitioning
  and clustering are BigQuery settings (DuckDB would read partition_by as a
  DuckLake option), so DuckDB gets none.
#}

{% macro goodput_incremental_strategy() -%}
  {{ return(adapter.dispatch('goodput_incremental_strategy', 'goodput_warehouse')()) }}
{%- endmacro %}

{% macro default__goodput_incremental_strategy() -%}
  {{ return('delete+insert') }}
{%- endmacro %}

{% macro bigquery__goodput_incremental_strategy() -%}
  {{ return('merge') }}
{%- endmacro %}


{#- window_key: the columns that name a recomputed window; row_key: the rest of a row's key. -#}
{% macro goodput_incremental_key(window_key, row_key) -%}
  {{ return(adapter.dispatch('goodput_incremental_key', 'goodput_warehouse')(window_key, row_key)) }}
{%- endmacro %}

{% macro default__goodput_incremental_key(window_key, row_key) -%}
  {{ return(window_key) }}
{%- endmacro %}

{% macro bigquery__goodput_incremental_key(window_key, row_key) -%}
  {{ return(window_key + row_key) }}
{%- endmacro %}


{% macro goodput_partition_by(field, data_type='timestamp', granularity='day') -%}
  {{ return(adapter.dispatch('goodput_partition_by', 'goodput_warehouse')(field, data_type, granularity)) }}
{%- endmacro %}

{% macro default__goodput_partition_by(field, data_type, granularity) -%}
  {{ return(none) }}
{%- endmacro %}

{% macro bigquery__goodput_partition_by(field, data_type, granularity) -%}
  {{ return({'field': field, 'data_type': data_type, 'granularity': granularity}) }}
{%- endmacro %}


{% macro goodput_cluster_by(columns) -%}
  {{ return(adapter.dispatch('goodput_cluster_by', 'goodput_warehouse')(columns)) }}
{%- endmacro %}

{% macro default__goodput_cluster_by(columns) -%}
  {{ return(none) }}
{%- endmacro %}

{% macro bigquery__goodput_cluster_by(columns) -%}
  {{ return(columns) }}
{%- endmacro %}


{#-
  The order a per-run table's rows are written in. A table whose runs sit in
  contiguous row groups lets an incremental build delete from only its
  rebuilt runs' groups, so DuckDB compacts only those (at 50 runs: untouched
  rows rewritten 2.5M -> 0.3M of 22.3M, file growth +7.5 % -> +4.0 %). The
  tables written in the order of their run_key (goodput_select_keyed_by_run)
  also let the scans skip other runs' groups by that key's min/max, which
  run_id's cannot (goodput_in_list). BigQuery clusters by run instead
  (goodput_incremental_by_run's cluster_by), where an ORDER BY would only
  cost a sort. An incremental build that recomputes one run skips the sort
  too: the rows it inserts are that run's alone (at L a hourly build sorted
  4.4M rows of int_goodput__timeline_curves by a key with one value).
-#}
{% macro goodput_rows_by_run(column='run_id') -%}
  {{ return(adapter.dispatch('goodput_rows_by_run', 'goodput_warehouse')(column)) }}
{%- endmacro %}

{% macro default__goodput_rows_by_run(column='run_id') -%}
  {%- set rebuilt_when = config.get('goodput_rebuilt_when') -%}
  {%- if not (rebuilt_when and model.resource_type != 'unit_test' and goodput_builds_incrementally()
              and goodput_listed_rebuilt_runs(ref('int_goodput__runs_to_rebuild'),
                                              goodput_rebuilt_runs_where(rebuilt_when)).run_ids | length <= 1) %}
  order by {{ column }}
  {%- endif -%}
{%- endmacro %}

{% macro bigquery__goodput_rows_by_run(column='run_id') -%}
{%- endmacro %}
