{{ config(**goodput_incremental_by_run('new_entries', appends_by='end_seq')) }}
{{ goodput_check_incremental_state() }}
{#
  Start/end pairs as the library forms them, in entry order: an end pairs with
  the latest start of its kind if no end consumed that start already (a second
  start replaces the first; an end without a pending start is ignored).
  Custom badput events pair per upper-cased type and only when start < end.
  Elastic waits (ElasticGoodputCalculator._extract_elastic_wait_intervals)
  pair per wait type as written ('unknown' when the entry has none), elastic
  re-initialisations on their own; both only when start < end.
  elastic_badput_type is the bucket ElasticGoodputCalculator puts an elastic
  pair in: ELASTIC_SCALE_UP when the wait type contains scale_up (any case),
  ELASTIC_SLICE_DOWN for any other wait, ELASTIC_REINITIALIZATION; null for
  the other kinds.
  A pair depends on its end and the event of its kind before it alone, so a
  run whose new entries were appended keeps its stored pairs and pairs only
  the new events, each kind's from its last stored event on.
#}

with

appended_runs as (

    select * from {{ goodput_appended_runs() }} as appended_runs

),

entries as {{ goodput_cte_read_in_place() }} (

    select * from {{ ref('int_goodput__entries_segmented') }}
    where {{ goodput_run_is_rebuilt(keyed=true) }}

),

run_boundary_events as (

    {% set kinds = [
        ('tpu_initialization', 'tpu_init_start_epoch', 'tpu_init_end_epoch'),
        ('training_prep', 'training_prep_start_epoch', 'training_prep_end_epoch'),
        ('data_loading', 'data_loading_start_epoch', 'data_loading_end_epoch'),
        ('custom_badput', 'custom_badput_start_epoch', 'custom_badput_end_epoch'),
        ('elastic_wait', 'elastic_wait_start_epoch', 'elastic_wait_end_epoch'),
        ('elastic_reinit', 'elastic_reinit_start_epoch', 'elastic_reinit_end_epoch'),
    ] %}
    {% for kind, start_column, end_column in kinds %}
    select
        run_id,
        event_seq,
        segment_no,
        '{{ kind }}' as interval_kind,
        {% if kind == 'custom_badput' -%}
        custom_badput_event_type
        {%- elif kind == 'elastic_wait' -%}
        coalesce(elastic_wait_event_type, 'unknown')
        {%- else -%}
        cast('' as {{ dbt.type_string() }})
        {%- endif %} as interval_subtype,
        {{ start_column }} is not null as is_start,
        coalesce({{ start_column }}, {{ end_column }}) as at_epoch
    from entries
    where {{ start_column }} is not null or {{ end_column }} is not null
    {% if not loop.last %}union all{% endif %}
    {% endfor %}

),

last_stored_events as (

    select
        run_boundary_events.run_id,
        run_boundary_events.interval_kind,
        run_boundary_events.interval_subtype,
        max(run_boundary_events.event_seq) as event_seq
    from run_boundary_events
    inner join appended_runs
        on appended_runs.run_id = run_boundary_events.run_id
        and run_boundary_events.event_seq <= appended_runs.appends_after_seq
    group by run_boundary_events.run_id, run_boundary_events.interval_kind, run_boundary_events.interval_subtype

),

{#- an appended run: its new events, after its last stored event of each kind
    (a new end pairs with it; itself it pairs with nothing here, as it has no
    event before it) -#}
boundary_events as (

    select run_boundary_events.*
    from run_boundary_events
    left join appended_runs
        on appended_runs.run_id = run_boundary_events.run_id
    left join last_stored_events
        on last_stored_events.run_id = run_boundary_events.run_id
        and last_stored_events.interval_kind = run_boundary_events.interval_kind
        and last_stored_events.interval_subtype = run_boundary_events.interval_subtype
        and last_stored_events.event_seq = run_boundary_events.event_seq
    where appended_runs.run_id is null
        or run_boundary_events.event_seq > appended_runs.appends_after_seq
        or last_stored_events.run_id is not null

),

with_previous as (

    select
        boundary_events.*,
        lag(is_start) over by_kind as previous_is_start,
        lag(at_epoch) over by_kind as previous_at_epoch,
        lag(event_seq) over by_kind as previous_seq
    from boundary_events
    window by_kind as (
        partition by run_id, interval_kind, interval_subtype order by event_seq
    )

),

paired as (

    select
        run_id,
        interval_kind,
        interval_subtype,
        previous_seq as start_seq,
        event_seq as end_seq,
        segment_no as end_segment_no,
        previous_at_epoch as start_epoch,
        at_epoch as end_epoch,
        at_epoch - previous_at_epoch as duration_seconds,
        case
            when interval_kind = 'elastic_reinit' then 'ELASTIC_REINITIALIZATION'
            when interval_kind != 'elastic_wait' then null
            when lower(interval_subtype) like '%scale_up%' then 'ELASTIC_SCALE_UP'
            else 'ELASTIC_SLICE_DOWN'
        end as elastic_badput_type
    from with_previous
    where not is_start
        and previous_is_start
        and (interval_kind not in ('custom_badput', 'elastic_wait', 'elastic_reinit') or previous_at_epoch < at_epoch)

)

select * from paired
