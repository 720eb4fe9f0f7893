{{
    config(
        materialized='incremental',
        incremental_strategy=goodput_incremental_strategy(),
        unique_key=goodput_incremental_key(
            ['run_id', 'window_end_epoch'], ['window_seconds', 'measure', 'custom_badput_event_type']
        ),
        partition_by=goodput_partition_by('computed_at'),
        cluster_by=goodput_cluster_by(['run_id', 'window_seconds']),
        on_schema_change='fail',
        goodput_rebuilt_when='evaluated',
        goodput_run_keyed=true,
        pre_hook="{{ goodput_forget_windows_off_the_grid(ref('int_goodput__rolling_window_ends')) }}",
        post_hook=goodput_incremental_state_hooks()
    )
}}
{{ goodput_check_incremental_state() }}
{#
  Every measure of every run in every rolling window on the grid: each window
  end of int_goodput__rolling_window_ends times each size in
  rolling_windows_seconds.

  Incremental: a new build recomputes the runs of int_goodput__runs_to_rebuild
  and, per run, the window ends from where its located amounts can have moved:
  the earliest amount of the segment that was final at the last build (a
  restart reclassifies only the segment it closes; program startup and data
  loading of that segment move with it; only new entries move amounts), the
  earliest new slice-count record (an elastic run's slice efficiencies in
  fct_goodput_rolling) or the last stored window end, whichever is earliest.
  Rows before that are kept after a check: the recomputed cumulative value of
  every measure at that point must equal the stored one (it catches checkpoint
  averages, sanitising and OTHER moving earlier amounts); when it does not, the
  whole run is recomputed.
#}

-- depends_on: {{ ref('int_goodput__timeline_amounts') }}, {{ ref('int_goodput__entries_ordered') }}
{% set grid = var('rolling_grid_seconds') | int %}
{% set windows = var('rolling_windows_seconds') %}

{#- The start of a window whose size is a multiple of the cadence (the
    library's 1 h, 1 d, 3 d, 5 d on a 60 s grid) is a grid point too, so its
    C(start) is the C(end) of the grid point `size / cadence` steps back: one
    sweep gives C at every grid point and lag() reads the starts, instead of
    two joins of every window against the points. Other sizes add their starts
    to the sweep and join them back. An incremental build sweeps from one
    largest window before the first end it recomputes. -#}
{% set on_grid = [] %}
{% set off_grid = [] %}
{% for size in windows %}
    {% do (on_grid if (size | int) % grid == 0 else off_grid).append(size | int) %}
{% endfor %}
{% set longest = windows | map('int') | max %}

with

totals as (

    select * from {{ ref('int_goodput__run_totals') }}
    where {{ goodput_run_is_rebuilt() }}
        and total_elapsed_seconds > 0

),

curves as {{ goodput_cte_read_in_place() }} (

    select * from {{ ref('int_goodput__timeline_curves') }}
    where {{ goodput_run_is_rebuilt(keyed=true) }}

),

runs as (

    select * from {{ ref('int_goodput__rolling_window_ends') }}
    where {{ goodput_run_is_rebuilt() }}

),

run_measures as (

    -- every measure of the run, so a recomputed window replaces all its rows
    -- (a bucket that becomes sanitised loses its curve, and shows 0)
    select distinct
        run_id,
        badput_type as measure,
        coalesce(custom_badput_event_type, '') as custom_badput_event_type
    from {{ ref('int_goodput__badput_buckets') }}
    where {{ goodput_run_is_rebuilt() }}
    union all
    select run_id, 'PRODUCTIVE', '' from runs
    union all
    select run_id, 'DISRUPTIONS', '' from runs

),

{% if is_incremental() %}

previous as (

    select
        run_id,
        max(final_segment_no) as previous_final_segment_no,
        max(window_end_epoch) as previous_last_end_epoch
    from {{ this }}
    where {{ goodput_run_is_rebuilt(keyed=true) }}
    group by run_id

),

moved as (

    {#- the earliest time per run where something new can have moved a window: only new entries move
        located amounts (a run rebuilt for the evaluation time alone, no job end and nothing new,
        recomputes just the windows from its last stored end on), from the segment that was final at
        the last build; a slice-count record is no amount, so the check below cannot see one, but it
        moves the slice efficiencies of every window after it (fct_goodput_rolling recomputes the
        windows this model recomputes): the new records are those after an appended run's stored last
        entry, and every record of a run recomputed whole -#}
    select run_id, min(moved_epoch) as first_moved_epoch
    from (
        select amounts.run_id, amounts.start_epoch as moved_epoch
        from {{ ref('int_goodput__timeline_amounts') }} as amounts
        inner join previous
            on previous.run_id = amounts.run_id
            and amounts.segment_no >= previous.previous_final_segment_no
        where {{ goodput_rebuilt_runs_predicate('amounts.run_id', ref('int_goodput__runs_to_rebuild'), 'new_entries',
                                                key_column='amounts.run_key') }}
        union all
        select records.run_id, records.record_epoch as moved_epoch
        from ({{ goodput_slice_count_records(ref('int_goodput__entries_ordered')) }}) as records
        left join {{ goodput_appended_runs() }} as appended_runs
            on appended_runs.run_id = records.run_id
        where {{ goodput_rebuilt_runs_predicate('records.run_id', ref('int_goodput__runs_to_rebuild'), 'new_entries') }}
            and (appended_runs.appends_after_seq is null or records.event_seq > appended_runs.appends_after_seq)
    ) as moved_times
    group by run_id

),

candidates as (

    select
        runs.run_id,
        greatest(
            runs.first_window_end_epoch,
            cast(
                floor(
                    least(
                        coalesce(moved.first_moved_epoch, previous.previous_last_end_epoch),
                        previous.previous_last_end_epoch - {{ grid }}
                    ) / {{ grid }}
                ) as {{ dbt.type_bigint() }}
            ) * {{ grid }}
        ) as window_end_epoch,
        {{ windows | map('int') | min }} as window_seconds
    from runs
    inner join previous
        on previous.run_id = runs.run_id
    left join moved
        on moved.run_id = runs.run_id

),

check_bounds as (

    {{ goodput_window_bounds('candidates', 'totals') }}

),

check_points as (

    {{ goodput_window_points('check_bounds') }}

),

{%- if not off_grid %}

{#- the breakpoints the check and a kept run's sweep can land on, found once: from the earlier of the
    check's first point and the first point the sweep reads when the check passes (its whole curve
    otherwise, below). Each search for every measure's last breakpoint before a point reads the run's
    whole stored curve (0.2 s at L) -#}
reach_points as (

    select run_id, at_offset from check_points

    union all

    select
        runs.run_id,
        {{ goodput_elapsed_offset(
            'greatest(runs.first_window_end_epoch, candidates.window_end_epoch - ' ~ longest ~ ')',
            'runs.elapsed_origin_epoch', 'totals.total_elapsed_seconds') }} as at_offset
    from runs
    inner join candidates
        on candidates.run_id = runs.run_id
    inner join totals
        on totals.run_id = runs.run_id

),

reachable_curves as (

    {{ goodput_reachable_breakpoints('reach_points', 'curves') }}

),

check_at_points as (

    {{ goodput_measures_at('check_points', 'reachable_curves', method='lookup', points_cover_runs=true) }}

),
{%- else %}

check_at_points as (

    {{ goodput_measures_at('check_points', 'curves', method='lookup') }}

),
{%- endif %}

check_amounts as (

    {{ goodput_window_amounts('check_bounds', 'check_at_points') }}

),

stored as (

    select
        stored.run_id,
        stored.measure,
        stored.custom_badput_event_type,
        stored.cumulative_amount
    from {{ this }} as stored
    inner join candidates
        on candidates.run_id = stored.run_id
        and candidates.window_end_epoch = stored.window_end_epoch
        and candidates.window_seconds = stored.window_seconds
    {# the candidates' runs: a filter the scan prunes by (macros/cross_db/run_key.sql) #}
    where {{ goodput_run_is_rebuilt('stored.run_id', keyed=true) }}

),

changed_before as (

    select distinct coalesce(check_amounts.run_id, stored.run_id) as run_id
    from check_amounts
    full outer join stored
        on stored.run_id = check_amounts.run_id
        and stored.measure = check_amounts.measure
        and stored.custom_badput_event_type = check_amounts.custom_badput_event_type
    -- a measure missing on one side counts as 0 there (stored rows include every bucket)
    where not {{ goodput_matches_stored('coalesce(check_amounts.cumulative_amount, 0)',
                                        'coalesce(stored.cumulative_amount, 0)') }}

),

measures_changed as (

    {#- the measures of the run changed (a first custom event type, a bucket gone): every window has a row
        per measure, so the stored ones would lack one or keep one too many -#}
    select distinct coalesce(measures_now.run_id, stored.run_id) as run_id
    from (
        select run_measures.*
        from run_measures
        inner join candidates
            on candidates.run_id = run_measures.run_id
    ) as measures_now
    full outer join stored
        on stored.run_id = measures_now.run_id
        and stored.measure = measures_now.measure
        and stored.custom_badput_event_type = measures_now.custom_badput_event_type
    where measures_now.run_id is null or stored.run_id is null

),

recompute_from as (

    select
        runs.run_id,
        case
            when candidates.run_id is null or changed_before.run_id is not null or measures_changed.run_id is not null
                then runs.first_window_end_epoch
            else candidates.window_end_epoch
        end as from_epoch
    from runs
    left join candidates
        on candidates.run_id = runs.run_id
    left join changed_before
        on changed_before.run_id = runs.run_id
    left join measures_changed
        on measures_changed.run_id = runs.run_id

),

{% endif %}

grid as (

    select
        runs.run_id,
        window_end_epoch,
        {{ goodput_elapsed_offset('window_end_epoch', 'runs.elapsed_origin_epoch', 'totals.total_elapsed_seconds') }}
            as at_offset
    from runs
    inner join totals
        on totals.run_id = runs.run_id
    {% if is_incremental() %}
    inner join recompute_from
        on recompute_from.run_id = runs.run_id
    {{ goodput_join_series(
        'greatest(runs.first_window_end_epoch, recompute_from.from_epoch - ' ~ longest ~ ')',
        'runs.last_window_end_epoch', grid, 'window_end_epoch') }}
    {% else %}
    {{ goodput_join_series('runs.first_window_end_epoch', 'runs.last_window_end_epoch', grid, 'window_end_epoch') }}
    {% endif %}

),

sweep_points as (

    select run_id, at_offset from grid
    {% if off_grid %}
    union
    select
        grid.run_id,
        {{ goodput_elapsed_offset('grid.window_end_epoch - off_grid.window_seconds', 'runs.elapsed_origin_epoch',
                                  'grid.at_offset') }} as at_offset
    from grid
    inner join runs
        on runs.run_id = grid.run_id
    cross join (
        {% for size in off_grid %}
        select {{ size }} as window_seconds{{ " union all" if not loop.last }}
        {% endfor %}
    ) as off_grid
    {% endif %}

),

{%- if not off_grid %}

{%- if is_incremental() %}

{#- the breakpoints the sweep can reach: a run that passed the check sweeps from one longest window
    before its candidate (or its first window end), a point of reach_points, so reachable_curves holds
    them; a run recomputed whole sweeps its whole curve. A CTE of its own, as the reduction below reads
    it twice -#}
{% set curve_columns = goodput_curve_columns() %}
sweep_curves as (

    select {{ 'reachable_curves.' ~ curve_columns | join(', reachable_curves.') }}
    from reachable_curves
    inner join candidates
        on candidates.run_id = reachable_curves.run_id
    inner join recompute_from
        on recompute_from.run_id = reachable_curves.run_id
        and recompute_from.from_epoch = candidates.window_end_epoch

    union all

    select {{ 'curves.' ~ curve_columns | join(', curves.') }}
    from curves
    inner join (
        select recompute_from.run_id
        from recompute_from
        left join candidates
            on candidates.run_id = recompute_from.run_id
        where candidates.run_id is null or recompute_from.from_epoch != candidates.window_end_epoch
    ) as whole_runs
        on whole_runs.run_id = curves.run_id

),
{%- endif %}

{#- every point on the grid: only each measure's last breakpoint of each grid step can be read -#}
grid_curves as (

    {{ goodput_last_breakpoints_per_step('sweep_curves' if is_incremental() else 'curves', 'totals', grid) }}

),
{%- endif %}

grid_values as (

    {%- if off_grid %}
    {{ goodput_measures_at('sweep_points', 'curves') }}
    {%- else %}
    {{ goodput_measures_at('sweep_points', 'grid_curves', points_cover_runs=true) }}
    {%- endif %}

),

window_sizes as (

    {% for size in windows %}
    select {{ size | int }} as window_seconds
    {% if not loop.last %}union all{% endif %}
    {% endfor %}

),

curve_values as (

    select
        grid.run_id,
        grid.window_end_epoch,
        grid.at_offset as end_offset,
        grid_values.measure,
        grid_values.custom_badput_event_type,
        grid_values.cumulative_amount
    from grid_values
    inner join grid
        on grid.run_id = grid_values.run_id
        and grid.at_offset = grid_values.at_offset
    inner join run_measures
        on run_measures.run_id = grid_values.run_id
        and run_measures.measure = grid_values.measure
        and run_measures.custom_badput_event_type = grid_values.custom_badput_event_type

),

curve_measures as (

    -- a few rows per run: the anti-join below then hashes these, not every breakpoint (0.7 s at L)
    select distinct
        run_id,
        {{ goodput_reported_measure('measure') }} as measure,
        custom_badput_event_type
    from curves

),

without_curve as (

    -- measures with nothing located (or sanitised away): 0 in every window
    select
        grid.run_id,
        grid.window_end_epoch,
        grid.at_offset as end_offset,
        run_measures.measure,
        run_measures.custom_badput_event_type,
        0 as cumulative_amount
    from run_measures
    inner join grid
        on grid.run_id = run_measures.run_id
    where not exists (
        select 1
        from curve_measures
        where curve_measures.run_id = run_measures.run_id
            and curve_measures.measure = run_measures.measure
            and curve_measures.custom_badput_event_type = run_measures.custom_badput_event_type
    )

),

lagged as (

    select
        all_values.*
        {%- for size in on_grid %},
        lag(cumulative_amount, {{ size // grid }}) over by_end as start_amount_{{ size }}
        {%- endfor %}
    from (
        select * from curve_values
        union all
        select * from without_curve
    ) as all_values
    window by_end as (partition by run_id, measure, custom_badput_event_type order by window_end_epoch)

),

windowed as (

    select
        lagged.*,
        window_sizes.window_seconds,
        {{ goodput_elapsed_offset('lagged.window_end_epoch - window_sizes.window_seconds', 'runs.elapsed_origin_epoch',
                                  'totals.total_elapsed_seconds') }} as start_offset,
        runs.elapsed_origin_epoch,
        runs.final_segment_no
    from lagged
    cross join window_sizes
    inner join runs
        on runs.run_id = lagged.run_id
    inner join totals
        on totals.run_id = lagged.run_id
    {% if is_incremental() %}
    inner join recompute_from
        on recompute_from.run_id = lagged.run_id
    where lagged.window_end_epoch >= recompute_from.from_epoch
    {% endif %}

),

final as (

    select
        windowed.run_id,
        windowed.window_seconds,
        windowed.window_end_epoch,
        windowed.start_offset,
        windowed.end_offset,
        windowed.elapsed_origin_epoch,
        windowed.measure,
        windowed.custom_badput_event_type,
        -- no grid point at the start: it is at or before the job start, where every curve is 0
        windowed.cumulative_amount - coalesce(
            case windowed.window_seconds
                {% for size in windows %}
                when {{ size | int }} then
                    {{- " windowed.start_amount_" ~ (size | int) if (size | int) in on_grid else " at_start.cumulative_amount" }}
                {% endfor %}
            end,
            0
        ) as window_amount,
        windowed.cumulative_amount,
        windowed.final_segment_no,
        cast('{{ run_started_at.strftime("%Y-%m-%d %H:%M:%S.%f") }}' as {{ dbt.type_timestamp() }}) as computed_at
    from windowed
    {% if off_grid %}
    left join grid_values as at_start
        on windowed.window_seconds in ({{ off_grid | join(', ') }})
        and at_start.run_id = windowed.run_id
        and at_start.measure = windowed.measure
        and at_start.custom_badput_event_type = windowed.custom_badput_event_type
        and at_start.at_offset = windowed.start_offset
    {% endif %}

)

{{ goodput_select_keyed_by_run('final') }}
