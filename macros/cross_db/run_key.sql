{#
  run_key: an integer key of the run, stored beside run_id in the large
  per-run tables on DuckDB, which are written in its order.

  Why: DuckDB skips a row group by the min/max of the filtered column, but it
  keeps only the first 8 bytes of a string's, and the run ids of one project
  share more ("bench/sim-197": every group's min and max were "bench/si").
  So a filter on run_id read the whole column of a 20M-row table (0.16 s for
  3 runs); on an integer key in key order it reads their groups (3 ms).
  The key is the first 60 bits of the md5 of run_id: stable across DuckDB
  versions (hash() is not, and a stored key that stopped matching would keep
  rows a rebuild should have deleted).
  BigQuery clusters by run_id, which prunes strings as they are: no key there.
#}

{#- The key of a run id (an expression), on a warehouse that stores it; none elsewhere. -#}
{% macro goodput_run_key(column) -%}
  {{ return(adapter.dispatch('goodput_run_key', 'goodput_warehouse')(column)) }}
{%- endmacro %}

{% macro default__goodput_run_key(column) -%}
  {{ return(none) }}
{%- endmacro %}

{% macro duckdb__goodput_run_key(column) -%}
  {{ return("cast('0x' || left(md5(" ~ column ~ "), 15) as bigint)") }}
{%- endmacro %}


{#-
  The final select of a keyed per-run model: every column of relation (a
  CTE) but a run_key it carried from its inputs, the run's key, in key
  order (goodput_rows_by_run). Where the warehouse stores no key, the
  relation as it is.
-#}
{% macro goodput_select_keyed_by_run(relation) -%}
  {#- a unit test's config lacks the model's -#}
  {%- if execute and model.resource_type != 'unit_test' and not config.get('goodput_run_keyed') -%}
    {{ exceptions.raise_compiler_error(this.identifier ~ " selects its rows keyed by run: configure it with "
        ~ "goodput_incremental_by_run(..., keyed=true) or goodput_run_keyed=true") }}
  {%- endif -%}
  {%- set key = goodput_run_key(relation ~ '.run_id') -%}
  {%- if key is none -%}
    select * from {{ relation }}
    {{ goodput_rows_by_run() }}
  {%- else -%}
    select columns(c -> c <> 'run_key'), {{ key }} as run_key from {{ relation }}
    {{ goodput_rows_by_run('run_key') }}
  {%- endif -%}
{%- endmacro %}


{#-
  "<key_column> in (<keys of run_ids>) and ", or '' where the warehouse
  stores no key: the part of a run filter the scan prunes by.
-#}
{% macro goodput_run_keys_among(run_keys, key_column) -%}
  {%- if key_column is none or not run_keys or goodput_run_key('run_id') is none -%}{{ return('') }}{%- endif -%}
  {{ return(key_column ~ " in (" ~ run_keys | join(", ") ~ ") and ") }}
{%- endmacro %}
