{#
  The two shapes every rolling mart takes from window values (rows of
  int_goodput__rolling_window_values or int_goodput__latest_window_values: one per
  window and measure), as selects to put in CTEs. Relations come in as
  arguments: `values` (the window values), `badput_types` (the Badput
  catalogue: which measures are buckets, whether each counts, whether it is
  exported), `buckets` (int_goodput__badput_buckets, only where `values` may
  lack a bucket). `extra` names columns carried through unchanged (e.g. computed_at).
#}

{#- One row per window: elapsed (cut at the job start and end), its start,
    end and counted end (counted_until_at) as timestamps, whether it reaches
    past the job's end (is_partial), productive seconds and Goodput %, the
    Badput that counts against Goodput (OTHER included) and disruptions inside it. -#}
{% macro goodput_window_totals(values, badput_types, extra=[]) -%}
    {%- set keys = ['run_id', 'window_seconds', 'window_end_epoch', 'elapsed_origin_epoch',
                    'start_offset', 'end_offset'] + extra -%}
    select
        {% for key in keys %}window_values.{{ key }},
        {% endfor -%}
        window_values.end_offset - window_values.start_offset as elapsed_seconds,
        {{ goodput_epoch_to_timestamp('window_values.elapsed_origin_epoch + window_values.start_offset') }}
            as window_start_at,
        {{ goodput_epoch_to_timestamp('window_values.window_end_epoch') }} as window_end_at,
        {{ goodput_epoch_to_timestamp('window_values.elapsed_origin_epoch + window_values.end_offset') }}
            as counted_until_at,
        window_values.elapsed_origin_epoch + window_values.end_offset < window_values.window_end_epoch as is_partial,
        sum(case when window_values.measure = 'PRODUCTIVE' then window_values.window_amount else 0 end)
            as productive_seconds,
        {# no Goodput where the window's productive time is outside [0, elapsed] (1 us of rounding
           allowed): the located attribution of a run the library raises on (a restart after a job
           end) gives such windows, and a negative or > 100 % Goodput must never be shown #}
        case
            when window_values.end_offset > window_values.start_offset
                and sum(case when window_values.measure = 'PRODUCTIVE' then window_values.window_amount else 0 end)
                    between -1e-6 and window_values.end_offset - window_values.start_offset + 1e-6
                then sum(case when window_values.measure = 'PRODUCTIVE' then window_values.window_amount else 0 end)
                    / (window_values.end_offset - window_values.start_offset) * 100
        end as goodput_pct,
        sum(case when badput_types.counts_against_goodput then window_values.window_amount else 0 end)
            as badput_seconds,
        cast(round(sum(case when window_values.measure = 'DISRUPTIONS' then window_values.window_amount else 0 end))
            as {{ dbt.type_bigint() }}) as disruptions
    from {{ values }} as window_values
    left join {{ badput_types }} as badput_types
        on badput_types.badput_type = window_values.measure
    group by {% for key in keys %}window_values.{{ key }}{{ ", " if not loop.last }}{% endfor %}
{%- endmacro %}


{#- One row per window and Badput bucket of the run (every bucket, 0 where
    none of it falls in the window), with the window's columns as above, the
    bucket's share of the window's elapsed time and its catalogue columns:
    gcm_badput_source (the label the library's monitor writes), badput_type_id
    (its order), counts_against_goodput, exported_to_gcm.
    buckets=none: `values` already holds every bucket of the run in every
    window (int_goodput__rolling_window_values does), so no join fills them in. -#}
{% macro goodput_window_buckets(values, badput_types, buckets=none, extra=[]) -%}
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
        {{ goodput_gcm_badput_source('windows.badput_type', 'windows.custom_badput_event_type') }}
            as gcm_badput_source,
        badput_types.badput_type_id,
        badput_types.counts_against_goodput,
        badput_types.exported_to_gcm,
        coalesce(windows.window_amount, 0) as badput_seconds,
        case
            when windows.end_offset > windows.start_offset
                then coalesce(windows.window_amount, 0) / (windows.end_offset - windows.start_offset) * 100
        end as badput_pct
    from (
        {% if buckets is none %}
        {#- `values` already has a row for every bucket of the run in every window -#}
        select
            {% for key in keys %}{{ key }},
            {% endfor -%}
            measure as badput_type,
            custom_badput_event_type,
            window_amount
        from {{ values }}
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
            from {{ buckets }}
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
    {# only the catalogue's buckets (the window values also hold PRODUCTIVE and DISRUPTIONS) #}
    inner join {{ badput_types }} as badput_types
        on badput_types.badput_type = windows.badput_type
{%- endmacro %}
