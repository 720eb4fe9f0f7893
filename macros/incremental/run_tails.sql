{#
  Replacing a run's tail. A model configured with
  goodput_incremental_by_run(..., replaces_tails_by=<column>) may, for a run
  whose new entries were appended (runs_to_rebuild.appends_after_seq), select
  only the rows from some value of <column> on and keep its stored rows before
  that point; for every other rebuilt run it selects the run whole, from its
  first row. The strategy then deletes, per appended run, the stored rows
  from the first row the select produced for it (all of them when it
  produced none), and inserts what the select produced. The rows of the
  other rebuilt runs went in the pre-hook (goodput_forget_rebuilt_runs).

  So the select decides per run how far back it recomputes, and must produce
  every row from that point on, stored rows it keeps as they are included:
  the strategy cannot tell a row it kept from one it left out.

  DuckDB only, where the pre-hook, the select and the strategy are one
  transaction; on BigQuery the model recomputes its rebuilt runs whole
  (goodput_run_tails_strategy is none there).
#}

{% macro goodput_run_tails_strategy() -%}
  {{ return(adapter.dispatch('goodput_run_tails_strategy', 'goodput_warehouse')()) }}
{%- endmacro %}

{% macro default__goodput_run_tails_strategy() -%}
  {{ return('goodput_replace_run_tails') }}
{%- endmacro %}

{% macro bigquery__goodput_run_tails_strategy() -%}
  {{ return(none) }}
{%- endmacro %}


{#- This build of the current model may keep the stored head of an appended run (see above). -#}
{% macro goodput_replaces_run_tails() -%}
  {{ return(model.resource_type != 'unit_test' and config.get('goodput_replaces_tails_by') is not none
            and goodput_builds_incrementally()) }}
{%- endmacro %}


{% macro get_incremental_goodput_replace_run_tails_sql(arg_dict) -%}
  {%- set column = config.get('goodput_replaces_tails_by') -%}
  {%- if column is none -%}
    {{ exceptions.raise_compiler_error(this.identifier ~ " uses the goodput_replace_run_tails strategy without "
        ~ "goodput_incremental_by_run(..., replaces_tails_by=...)") }}
  {%- endif -%}
  {%- set columns = arg_dict['dest_columns'] | map(attribute='quoted') | join(', ') -%}
  {#- the appended runs' keys, which let the delete skip other runs' row groups (macros/cross_db/run_key.sql) -#}
  {%- set appended = goodput_listed_rebuilt_runs(ref('int_goodput__runs_to_rebuild'),
                                                 goodput_rebuilt_runs_where(part='appended')) -%}
  {%- set keys = goodput_run_keys_among(appended.run_keys, 'stored.run_key')
                 if config.get('goodput_run_keyed') and appended.run_ids | length <= 1000 else '' -%}
  delete from {{ arg_dict['target_relation'] }} as stored
  using (
      select appended_runs.run_id, min(selected.{{ column }}) as replaced_from
      from {{ goodput_appended_runs() }} as appended_runs
      left join {{ arg_dict['temp_relation'] }} as selected
          on selected.run_id = appended_runs.run_id
      group by appended_runs.run_id
  ) as tails
  where {{ keys }}stored.run_id = tails.run_id
      and (tails.replaced_from is null or stored.{{ column }} >= tails.replaced_from);

  insert into {{ arg_dict['target_relation'] }} ({{ columns }})
  select {{ columns }} from {{ arg_dict['temp_relation'] }}
{%- endmacro %}
