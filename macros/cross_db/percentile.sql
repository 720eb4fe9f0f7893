{#
  Exact continuous percentile (linear interpolation, numpy's default and the
  library's compute_percentile) of expr over the rows of relation, one row per
  group: a select of (group_by, <alias>). Nulls are ignored; a group whose
  values are all null gets null.
  DuckDB has it as an aggregate. BigQuery has an exact percentile only as an
  analytic function, so there it is a window taken once per group. On DuckDB
  the aggregate costs a fraction of the window over the whole partition (the
  three percentiles of a run's 1M step times at L: 1.6 s as windows).
#}

{% macro goodput_percentile_cont_by(relation, expr, fraction, group_by, alias) -%}
  {{ return(adapter.dispatch('goodput_percentile_cont_by', 'goodput_warehouse')(relation, expr, fraction, group_by, alias)) }}
{%- endmacro %}

{% macro default__goodput_percentile_cont_by(relation, expr, fraction, group_by, alias) -%}
    select {{ group_by }}, quantile_cont({{ expr }}, {{ fraction }}) as {{ alias }}
    from {{ relation }}
    group by {{ group_by }}
{%- endmacro %}

{% macro bigquery__goodput_percentile_cont_by(relation, expr, fraction, group_by, alias) -%}
    select distinct {{ group_by }}, percentile_cont({{ expr }}, {{ fraction }}) over (partition by {{ group_by }}) as {{ alias }}
    from {{ relation }}
{%- endmacro %}
