{#
  The two shapes every rolling mart takes from window values (rows of
  int_goodput__rolling_values or int_goodput__latest_window_values: one per
  window and measure), as selects to put in CTEs. `extra` names columns
  carried through unchanged (e.g. computed_at).
#}

{#- One row per window: elapsed (cut at the job start and end), its start,
    end and counted end (counted_until_at) as timestamps, whether it reaches past the job's end (is_partial),
    productive seconds and Goodput %, counted Badput (every bucket but
    DATA_LOADING_ASYNC, OTHER included) and disruptions inside it. -#}
{% macro goodput_window_totals(values, extra=[]) -%}
    {%- set keys = ['run_id', 'window_seconds', 'window_end_epoch', 'elapsed_origin_epoch',
                    'start_offset', 'end_offset'] + extra -%}
    select
        {% for key in keys %}{{ key }},
        {% endfor -%}
        end_offset - start_offset as elapsed_seconds,
        {{ goodput_epoch_to_timestamp('elapsed_origin_epoch + start_offset') }} as window_start_at,
        {{ goodput_epoch_to_timestamp('window_end_epoch') }} as window_end_at,
        {{ goodput_epoch_to_timestamp('elapsed_origin_epoch + end_offset') }} as counted_until_at,
        elapsed_origin_epoch + end_offset < window_end_epoch as is_partial,
        sum(case when measure = 'PRODUCTIVE' then window_amount else 0 end) as productive_seconds,
        case
            when end_offset > start_offset
                then sum(case when measure = 'PRODUCTIVE' then window_amount else 0 end)
                    / (end_offset - start_offset) * 100
        end as goodput_pct,
        sum(
            case
                when measure not in ('PRODUCTIVE', 'DISRUPTIONS', 'DATA_LOADING_ASYNC') then window_amount
                else 0
            end
        ) as badput_seconds,
        cast(round(sum(case when measure = 'DISRUPTIONS' then window_amount else 0 end)) as {{ dbt.type_bigint() }})
            as disruptions
    from {{ values }}
    group by {{ keys | join(', ') }}
{%- endmacro %}


{#- One row per window and Badput bucket of the run (every bucket, 0 where
    none of it falls in the window), with the window's columns as above, the
    bucket's share of the window's elapsed time, and badput_source: the label
    the library's monitor writes (CUSTOM_BADPUT_EVENTS.<TYPE> for custom events).
    complete=true: `values` already holds every bucket of the run in every
    window (int_goodput__rolling_values does), so no join fills them in. -#}
{% macro goodput_window_buckets(values, extra=[], complete=false) -%}
    {%- set keys = ['run_id', 'window_seconds', 'window_end_epoch', 'elapsed_origin_epoch',
                    'start_offset', 'end_offset'] + extra -%}
    select
        {% for key in keys %}windows.{{ key }},
        {% endfor -%}
        windows.end_offset - windows.start_offset as elapsed_seconds,
        {{ goodput_epoch_to_timestamp('windows.elapsed_origin_epoch + windows.start_offset') }} as window_start_at,
        {{ goodput_epoch_to_timestamp('windows.window_end_epoch') }} as window_end_at,
        {{ goodput_epoch_to_timestamp('windows.elapsed_origin_epoch + windows.end_offset') }} as counted_until_at,
        windows.elapsed_origin_epoch + windows.end_offset < windows.window_end_epoch as is_partial,
        windows.badput_type,
        nullif(windows.custom_badput_event_type, '') as custom_badput_event_type,
        case
            when windows.custom_badput_event_type != ''
                then windows.badput_type || '.' || windows.custom_badput_event_type
            else windows.badput_type
        end as badput_source,
        coalesce(windows.window_amount, 0) as badput_seconds,
        case
            when windows.end_offset > windows.start_offset
                then coalesce(windows.window_amount, 0) / (windows.end_offset - windows.start_offset) * 100
        end as badput_pct
    from (
        {% if complete %}
        {#- `values` already has a row for every bucket of the run in every window -#}
        select
            {% for key in keys %}{{ key }},
            {% endfor -%}
            measure as badput_type,
            custom_badput_event_type,
            window_amount
        from {{ values }}
        where measure not in ('PRODUCTIVE', 'DISRUPTIONS')
        {% else %}
        select
            {% for key in keys %}run_windows.{{ key }},
            {% endfor -%}
            buckets.badput_type,
            buckets.custom_badput_event_type,
            window_values.window_amount
        from (select distinct {{ keys | join(', ') }} from {{ values }}) as run_windows
        inner join (
            select distinct run_id, badput_type, coalesce(custom_badput_event_type, '') as custom_badput_event_type
            from {{ ref('int_goodput__badput_buckets') }}
        ) as buckets
            on buckets.run_id = run_windows.run_id
        left join {{ values }} as window_values
            on window_values.run_id = run_windows.run_id
            and window_values.window_seconds = run_windows.window_seconds
            and window_values.window_end_epoch = run_windows.window_end_epoch
            and window_values.measure = buckets.badput_type
            and window_values.custom_badput_event_type = buckets.custom_badput_event_type
        {% endif %}
    ) as windows
{%- endmacro %}
