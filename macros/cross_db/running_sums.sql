{#
  goodput_running_sums(relation, partition_by, order_by, columns): every row
  of the relation with, for each column c, running_c = the sum of c over the
  rows of its partition up to and including this one, in order_by order.
  order_by must be unique within a partition (the frame is ROWS), and the
  columns exact numbers (goodput_exact): the DuckDB form subtracts sums.

  Default (BigQuery): the partitioned window, which BigQuery spreads over
  its workers by partition.

  DuckDB: one window over the whole relation in (partition_by, order_by)
  order, minus each partition's base (the sum of the partitions before it,
  from one row per partition). Exact in integers, so the same numbers.
  DuckDB 1.5 builds a 128-bit running sum over many partitions at about
  twice the cost of the same sum over one: int_goodput__timeline_curves'
  two sums over 200 runs' 13.4M breakpoints (2,491 partitions) took 17-21 s
  partitioned and 9.2 s this way; at L (15 partitions, 4.4M breakpoints)
  2.3-2.7 s against 3.0 s.
#}

{% macro goodput_running_sums(relation, partition_by, order_by, columns) -%}
  {{ return(adapter.dispatch('goodput_running_sums', 'goodput_warehouse')(relation, partition_by, order_by, columns)) }}
{%- endmacro %}

{% macro default__goodput_running_sums(relation, partition_by, order_by, columns) -%}
    select
        {{ relation }}.*,
        {%- for column in columns %}
        sum({{ column }}) over by_order as running_{{ column }}{{ "," if not loop.last }}
        {%- endfor %}
    from {{ relation }}
    window by_order as (
        partition by {{ partition_by | join(', ') }}
        order by {{ order_by | join(', ') }}
        rows between unbounded preceding and current row
    )
{%- endmacro %}

{% macro duckdb__goodput_running_sums(relation, partition_by, order_by, columns) -%}
    select
        overall.* exclude ({% for column in columns %}overall_{{ column }}{{ ", " if not loop.last }}{% endfor %}),
        {%- for column in columns %}
        overall.overall_{{ column }} - coalesce(bases.base_{{ column }}, 0) as running_{{ column }}{{ "," if not loop.last }}
        {%- endfor %}
    from (
        select
            {{ relation }}.*,
            {%- for column in columns %}
            sum({{ column }}) over by_order as overall_{{ column }}{{ "," if not loop.last }}
            {%- endfor %}
        from {{ relation }}
        window by_order as (
            order by {{ (partition_by + order_by) | join(', ') }}
            rows between unbounded preceding and current row
        )
    ) as overall
    inner join (
        select
            {{ partition_by | join(', ') }},
            {%- for column in columns %}
            sum(sum({{ column }})) over earlier_partitions as base_{{ column }}{{ "," if not loop.last }}
            {%- endfor %}
        from {{ relation }}
        group by {{ partition_by | join(', ') }}
        window earlier_partitions as (
            order by {{ partition_by | join(', ') }}
            rows between unbounded preceding and 1 preceding
        )
    ) as bases
        on {% for key in partition_by %}bases.{{ key }} is not distinct from overall.{{ key }}{{ " and " if not loop.last }}{% endfor %}
{%- endmacro %}
