{{ config(**goodput_incremental_by_run('evaluated', replaces_tails_by='at_offset', keyed=true)) }}
{{ goodput_check_incremental_state() }}
{#
  The cumulative curve of every measure of every run, as breakpoints: C(x) =
  the measure's located amounts up to x seconds after the job start. Between
  two breakpoints C is linear, so
      C(x) = value_at + slope_after * (x - at_offset)
  with the last breakpoint at or before x. Windows then need two lookups per
  measure (C(end) - C(start)), never a scan of the amounts.

  - Offsets are seconds since the run's elapsed origin; amounts located
    outside [0, total elapsed] are squeezed onto its edges, so the curve
    reaches the run's total at the end and the whole job adds up.
  - Buckets the library zeroes when sanitising (below 0 or above the total)
    have no curve.
  - COUNTED is productive time plus every bucket that counts against Goodput
    (the catalogue's counts_against_goodput: all but DATA_LOADING_ASYNC): OTHER up to x is max(0, min over [x, total] of
    S(s) = s - COUNTED(s)), the slack left once every later overlap of
    buckets is paid for. That is non-decreasing (no window gets negative
    OTHER), adds up over any partition, and ends at the library's
    max(0, total - productive - counted). next_future_min is that minimum
    over the breakpoints after this one.
  - Slopes and intercepts are running sums in fixed point (goodput_exact), so
    they return to exactly zero between stretches of overlapping amounts and
    rounding does not creep along the run; two window passes in all.

  Incremental (DuckDB): a run whose new entries were appended keeps its stored
  breakpoints before a cut and recomputes the rest (the tail), when nothing
  says the head moved (macros/incremental/run_tails.sql writes it):
  - the cut is where its amounts can have moved from: the first amount of the
    segment that was final at the last build (a restart reclassifies the
    segment it closes), of an amount reaching past the smaller of the last
    and this build's total (the edge squeezes it), and that total itself;
  - every measure's new state just before the cut (last breakpoint, value,
    slope: exact sums of the amounts before it) must equal its stored last
    breakpoint there, or the run is recomputed whole (a restart reaching
    further back, checkpoint averages, sanitising, a moved job start: the
    entries before the cut are the stored ones, and each of those run-wide
    changes moves some measure's state at the cut; a change that kept every
    measure's state there would go unseen);
  - the tail's exact running sums start from that state, so its rows are the
    ones a full build computes; the stored rows' next_future_min then takes
    the tail's lowest slack in, which needs that slack to be at most the one
    the last build's tail had (else whole, as the stored minimum cannot be
    taken apart): least(stored, tail's) for the stored rows where it lowers,
    a suffix of them, which the select emits again with the tail.
#}

with

badput_types as (

    select * from {{ ref('badput_types') }}

),

amounts as (

    select * from {{ ref('int_goodput__timeline_amounts') }}
    where {{ goodput_run_is_rebuilt(keyed=true) }}

),

totals as (

    select * from {{ ref('int_goodput__run_totals') }}
    where {{ goodput_run_is_rebuilt() }}
        and total_elapsed_seconds > 0

),

sanitized as (

    select
        run_id,
        badput_type,
        coalesce(custom_badput_event_type, '') as custom_badput_event_type
    from {{ ref('int_goodput__badput_buckets') }}
    where {{ goodput_run_is_rebuilt() }}
        and was_sanitized

),

kept as (

    select
        amounts.run_id,
        amounts.measure,
        amounts.custom_badput_event_type,
        amounts.segment_no,
        amounts.end_epoch - totals.elapsed_origin_epoch as unsqueezed_end_offset,
        totals.total_elapsed_seconds,
        {{ goodput_elapsed_offset('amounts.start_epoch', 'totals.elapsed_origin_epoch',
                                  'totals.total_elapsed_seconds') }} as start_offset,
        {{ goodput_elapsed_offset('amounts.end_epoch', 'totals.elapsed_origin_epoch',
                                  'totals.total_elapsed_seconds') }} as end_offset,
        amounts.amount
    from amounts
    inner join totals
        on totals.run_id = amounts.run_id
    left join sanitized
        on sanitized.run_id = amounts.run_id
        and sanitized.badput_type = amounts.measure
        and sanitized.custom_badput_event_type = amounts.custom_badput_event_type
    where sanitized.run_id is null

),

with_counted as (

    select run_id, measure, custom_badput_event_type, start_offset, end_offset, amount
    from kept

    union all

    -- productive time and every bucket the catalogue counts against Goodput
    select
        kept.run_id,
        'COUNTED' as measure,
        '' as custom_badput_event_type,
        kept.start_offset,
        kept.end_offset,
        kept.amount
    from kept
    left join badput_types
        on badput_types.badput_type = kept.measure
    where kept.measure = 'PRODUCTIVE' or badput_types.counts_against_goodput

    union all

    {# the job's two ends are breakpoints of COUNTED, so S is linear between its breakpoints #}
    select
        edge.run_id,
        'COUNTED' as measure,
        '' as custom_badput_event_type,
        edge.at_offset as start_offset,
        edge.at_offset as end_offset,
        0 as amount
    from (
        select run_id, 0.0 as at_offset from totals
        union all
        select run_id, total_elapsed_seconds from totals
    ) as edge

),

{%- if goodput_replaces_run_tails() %}

appended_runs as (

    select * from {{ goodput_appended_runs() }} as appended_runs

),

stored as {{ goodput_cte_read_in_place() }} (

    select stored.*
    from {{ this }} as stored
    inner join appended_runs
        on appended_runs.run_id = stored.run_id
    where {{ goodput_run_is_rebuilt('stored.run_id', keyed=true) }}

),

stored_totals as (

    {#- the total of the last build: the last breakpoint of COUNTED -#}
    select run_id, max(at_offset) as total_elapsed_seconds
    from stored
    where measure = 'COUNTED'
    group by run_id

),

cuts as (

    select
        kept.run_id,
        least(
            min(stored_totals.total_elapsed_seconds),
            min(kept.total_elapsed_seconds),
            {#- the segment of the stored last entry: the final one at the last build -#}
            coalesce(min(case when kept.segment_no >= appended_runs.appends_after_segment_no then kept.start_offset end),
                     min(kept.total_elapsed_seconds)),
            coalesce(min(case
                when kept.unsqueezed_end_offset > least(stored_totals.total_elapsed_seconds, kept.total_elapsed_seconds)
                    then kept.start_offset
            end), min(kept.total_elapsed_seconds))
        ) as cut_offset
    from kept
    inner join stored_totals
        on stored_totals.run_id = kept.run_id
    inner join appended_runs
        on appended_runs.run_id = kept.run_id
        and appended_runs.appends_after_segment_no is not null
    group by kept.run_id

),

{#- every measure's exact sums just before the cut, from the rows themselves -#}
state_before_cut as (

    {{ goodput_curve_state_before('with_counted', 'cuts') }}

),

stored_last_offsets as (

    select stored.run_id, stored.measure, stored.custom_badput_event_type, max(stored.at_offset) as at_offset
    from stored
    inner join cuts
        on cuts.run_id = stored.run_id
        and stored.at_offset < cuts.cut_offset
    group by stored.run_id, stored.measure, stored.custom_badput_event_type

),

stored_before_cut as (

    select stored.*
    from stored
    inner join stored_last_offsets
        on stored_last_offsets.run_id = stored.run_id
        and stored_last_offsets.measure = stored.measure
        and stored_last_offsets.custom_badput_event_type = stored.custom_badput_event_type
        and stored_last_offsets.at_offset = stored.at_offset

),

{#- the same measures, each ending before the cut on the same breakpoint, value and slope -#}
heads_that_stand as (

    select coalesce(computed.run_id, stored_before_cut.run_id) as run_id
    from (
        select
            run_id,
            measure,
            custom_badput_event_type,
            at_offset,
            {{ goodput_exact_to_float('slope_exact') }} as slope_after,
            at_offset * {{ goodput_exact_to_float('slope_exact') }} + {{ goodput_exact_to_float('intercept_exact') }}
                as value_at
        from state_before_cut
    ) as computed
    full outer join stored_before_cut
        on stored_before_cut.run_id = computed.run_id
        and stored_before_cut.measure = computed.measure
        and stored_before_cut.custom_badput_event_type = computed.custom_badput_event_type
    group by coalesce(computed.run_id, stored_before_cut.run_id)
    having min(case
        when computed.run_id is not null
            and stored_before_cut.run_id is not null
            and computed.at_offset = stored_before_cut.at_offset
            and {{ goodput_matches_stored('computed.value_at', 'stored_before_cut.value_at') }}
            and {{ goodput_matches_stored('computed.slope_after', 'stored_before_cut.slope_after') }}
            then 1 else 0
    end) = 1

),

{#- the events from the cut on of the runs whose head stands: rows ending there or later -#}
tail_rows as (

    select with_counted.*
    from with_counted
    inner join heads_that_stand
        on heads_that_stand.run_id = with_counted.run_id
    inner join cuts
        on cuts.run_id = with_counted.run_id
    where with_counted.end_offset >= cuts.cut_offset

),

tail_events as (

    select tail_events.*
    from ({{ goodput_curve_events('tail_rows') }}) as tail_events
    inner join cuts
        on cuts.run_id = tail_events.run_id
    where tail_events.at_offset >= cuts.cut_offset

),

counted_tails as (

    {#- COUNTED from the cut on, for its lowest slack: S = x - C(x), either side of a jump -#}
    select
        run_id,
        at_offset,
        sum(jump) as jump,
        sum(slope_delta) as slope_delta,
        sum(intercept_delta) as intercept_delta
    from tail_events
    where measure = 'COUNTED'
    group by run_id, at_offset

),

counted_tail_slack as (

    select
        counted_tails.run_id,
        min(
            counted_tails.at_offset - greatest(counted_tails.value_at, counted_tails.value_at - counted_tails.jump)
        ) as lowest_slack
    from (
        select
            counted_tails.run_id,
            counted_tails.at_offset,
            counted_tails.jump,
            counted_tails.at_offset * {{ goodput_exact_to_float(
                'state_before_cut.slope_exact + sum(counted_tails.slope_delta) over by_offset') }}
                + {{ goodput_exact_to_float(
                'state_before_cut.intercept_exact + sum(counted_tails.intercept_delta) over by_offset') }} as value_at
        from counted_tails
        inner join state_before_cut
            on state_before_cut.run_id = counted_tails.run_id
            and state_before_cut.measure = 'COUNTED'
        window by_offset as (
            partition by counted_tails.run_id
            order by counted_tails.at_offset
            rows between unbounded preceding and current row
        )
    ) as counted_tails
    group by counted_tails.run_id

),

{#- kept: the run's head stands, and the stored minimum slack can take the tail's in -#}
tails as (

    select
        cuts.run_id,
        cuts.cut_offset,
        counted_tail_slack.lowest_slack
    from cuts
    inner join counted_tail_slack
        on counted_tail_slack.run_id = cuts.run_id
    inner join stored_before_cut
        on stored_before_cut.run_id = cuts.run_id
        and stored_before_cut.measure = 'COUNTED'
        and stored_before_cut.custom_badput_event_type = ''
    where counted_tail_slack.lowest_slack <= stored_before_cut.next_future_min

),

{#- the state the tail of a kept run starts from -#}
heads as (

    select state_before_cut.*
    from state_before_cut
    inner join tails
        on tails.run_id = state_before_cut.run_id

),

{#- a kept run's stored rows from where its minimum slack lowers, or its last breakpoint before the cut -#}
replaced_from as (

    select
        tails.run_id,
        least(
            max(stored.at_offset),
            coalesce(min(case
                when stored.measure = 'COUNTED' and stored.next_future_min > tails.lowest_slack then stored.at_offset
            end), max(stored.at_offset))
        ) as at_offset
    from stored
    inner join tails
        on tails.run_id = stored.run_id
        and stored.at_offset < tails.cut_offset
    group by tails.run_id

),

heads_again as (

    select
        stored.run_id,
        stored.measure,
        stored.custom_badput_event_type,
        stored.at_offset,
        stored.value_at,
        stored.slope_after,
        case
            when stored.measure = 'COUNTED' then least(stored.next_future_min, tails.lowest_slack)
        end as next_future_min
    from stored
    inner join tails
        on tails.run_id = stored.run_id
        and stored.at_offset < tails.cut_offset
    inner join replaced_from
        on replaced_from.run_id = stored.run_id
        and stored.at_offset >= replaced_from.at_offset

),

whole_run_rows as (

    select with_counted.*
    from with_counted
    left join tails
        on tails.run_id = with_counted.run_id
    where tails.run_id is null

),

{%- endif %}

{#- every event of a run built whole; a kept run's from its cut on -#}
events as (

    {%- if goodput_replaces_run_tails() %}
    {{ goodput_curve_events('whole_run_rows') }}

    union all

    select tail_events.*
    from tail_events
    inner join tails
        on tails.run_id = tail_events.run_id
    {%- else %}
    {{ goodput_curve_events('with_counted') }}
    {%- endif %}

),

breakpoints as (

    select
        run_id,
        measure,
        custom_badput_event_type,
        at_offset,
        sum(jump) as jump,
        sum(slope_delta) as slope_delta,
        sum(intercept_delta) as intercept_delta
    from events
    group by run_id, measure, custom_badput_event_type, at_offset

),

{#- C(x) = x * slope + intercept after the last breakpoint at or before x:
    both are exact running sums, so they are exactly zero once every span
    so far has ended, and rounding does not creep along the run. A kept
    run's tail starts its sums from its head's state. -#}
{% set slope_from = "coalesce(heads.slope_exact, 0) + " if goodput_replaces_run_tails() else "" %}
{% set intercept_from = "coalesce(heads.intercept_exact, 0) + " if goodput_replaces_run_tails() else "" %}
running_sums as (

    {{ goodput_running_sums(
        'breakpoints',
        ['run_id', 'measure', 'custom_badput_event_type'],
        ['at_offset'],
        ['slope_delta', 'intercept_delta']
    ) }}

),

running as (

    select
        running_sums.run_id,
        running_sums.measure,
        running_sums.custom_badput_event_type,
        running_sums.at_offset,
        running_sums.jump,
        {{ goodput_exact_to_float(slope_from ~ 'running_sums.running_slope_delta') }} as slope_after,
        {{ goodput_exact_to_float(intercept_from ~ 'running_sums.running_intercept_delta') }} as intercept_after
    from running_sums
    {%- if goodput_replaces_run_tails() %}
    left join heads
        on heads.run_id = running_sums.run_id
        and heads.measure = running_sums.measure
        and heads.custom_badput_event_type = running_sums.custom_badput_event_type
    {%- endif %}

),

valued as (

    select
        run_id,
        measure,
        custom_badput_event_type,
        at_offset,
        jump,
        slope_after,
        at_offset * slope_after + intercept_after as value_at
    from running

),

{#- S = elapsed - COUNTED; at a jump the left limit counts too -#}
slack as (

    select
        valued.*,
        case
            when measure = 'COUNTED'
                then at_offset - greatest(value_at, value_at - jump)
        end as lowest_slack_here
    from valued

),

final as (

    {#- a running minimum from the end, of COUNTED only: every other measure's
        is null (DuckDB: 1.3 s where the "1 following and unbounded
        following" frame took 11 s at 4M breakpoints; over the fleet's 13.4M
        breakpoints 8.9 s for every measure, 2.5 s for COUNTED's 3.4M) -#}
    select
        run_id,
        measure,
        custom_badput_event_type,
        at_offset,
        value_at,
        slope_after,
        min(lowest_slack_here) over (
            partition by run_id
            order by at_offset desc
            rows between unbounded preceding and 1 preceding
        ) as next_future_min
    from slack
    where measure = 'COUNTED'

    union all

    select
        run_id,
        measure,
        custom_badput_event_type,
        at_offset,
        value_at,
        slope_after,
        {{ goodput_float('null') }} as next_future_min
    from slack
    where measure != 'COUNTED'

),

curves as (

    select * from final
    {%- if goodput_replaces_run_tails() %}
    union all
    select * from heads_again
    {%- endif %}

)

{{ goodput_select_keyed_by_run('curves') }}
