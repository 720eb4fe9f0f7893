{{ config(**goodput_incremental_by_run('new_entries', appends_by='event_seq', keyed=true)) }}
{{ goodput_check_incremental_state() }}
{#
  Every counted entry with the segment (0 = first start, k = after the k-th
  restart) the library is in when it processes the entry.
  A restart depends on the entries before it alone, so a run whose new
  entries follow its stored ones keeps its rows: the new entries carry on
  from the segment of its stored last entry.
#}

with

appended_runs as (

    select * from {{ goodput_appended_runs() }} as appended_runs

),

whole_runs_entries as (

    select * from {{ ref('int_goodput__entries_ordered') }}
    where {{ goodput_run_is_rebuilt(part='whole', keyed=true) }}

),

appended_entries as (

    select entries.*
    from {{ ref('int_goodput__entries_ordered') }} as entries
    inner join appended_runs
        on appended_runs.run_id = entries.run_id
    where {{ goodput_run_is_rebuilt('entries.run_id', part='appended', keyed=true) }}
        and entries.event_seq > appended_runs.appends_after_seq

),

entries as (

    select * from whole_runs_entries
    union all
    select * from appended_entries

),

carried_segments as (

    {# the segment of each appended run's stored last entry #}
    {%- if goodput_builds_incrementally() %}
    select stored.run_id, stored.segment_no
    from {{ this }} as stored
    inner join appended_runs
        on appended_runs.run_id = stored.run_id
        and appended_runs.appends_after_seq = stored.event_seq
    where {{ goodput_run_is_rebuilt('stored.run_id', part='appended', keyed=true) }}
    {%- else %}
    select run_id, cast(null as {{ dbt.type_bigint() }}) as segment_no
    from appended_runs
    {%- endif %}

),

restarts as (

    select * from {{ ref('int_goodput__segments') }}
    where {{ goodput_run_is_rebuilt() }}
        and segment_no > 0

),

marked as (

    select
        entries.*,
        restarts.segment_no as restart_segment_no
    from entries
    left join restarts
        on restarts.run_id = entries.run_id
        and restarts.segment_start_seq = entries.event_seq

),

segmented as (

    select
        marked.*,
        coalesce(
            max(marked.restart_segment_no) over (
                partition by marked.run_id order by marked.event_seq rows between unbounded preceding and current row
            ),
            carried_segments.segment_no,
            0
        ) as segment_no,
        marked.restart_segment_no is not null as is_restart
    from marked
    left join carried_segments
        on carried_segments.run_id = marked.run_id

)

{{ goodput_select_keyed_by_run('segmented') }}
