{{ config(**goodput_incremental_by_run('new_entries')) }}
{{ goodput_check_incremental_state() }}
{#
  The ideal step time and the step deviation figures of each run, as the
  library computes them:
  - ideal = var('goodput_ideal_step_seconds') when configured, else the mean of
    the step times >= 1 s that are <= median + 3 * MAD (scipy's
    median_abs_deviation, scale 1);
  - deviation of a step = |step time - ideal| (fct_steps adds it to each step
    on read);
  - the exported figure (compute_step_deviation_from_baseline, cumulative):
    fewer than 100 steps: mean deviation; fewer than 1,100: 90th percentile of
    the last 100; else that minus the median of the 1,000 before them, "last"
    meaning in the order the steps were first timed;
  - the mean deviation, which the monitor's step-deviation worker writes to the
    performance metric (beside the ideal step time of its cumulative upload).
  One row per run with a deviation (an ideal that is neither missing nor 0).
  Every new step moves the ideal, and with it every step's deviation: stored
  per step, each hourly build rewrote all of a running run's steps (3 s at L,
  a million steps); per run, it writes one row. Each percentile is one row per run
  (goodput_percentile_cont_by) joined back to the steps.
#}

{%- set configured_ideal = var('goodput_ideal_step_seconds', none) %}

with

step_times as (

    select * from {{ ref('int_goodput__step_times') }}
    where {{ goodput_run_is_rebuilt() }}

),

eligible as (

    select run_id, step_seconds
    from step_times
    where step_seconds >= 1.0

),

medians as (

    {{ goodput_percentile_cont_by('eligible', 'step_seconds', 0.5, 'run_id', 'median_seconds') }}

),

spread as (

    select
        eligible.run_id,
        eligible.step_seconds,
        medians.median_seconds,
        abs(eligible.step_seconds - medians.median_seconds) as absolute_deviation
    from eligible
    inner join medians
        on medians.run_id = eligible.run_id

),

median_absolute_deviations as (

    {{ goodput_percentile_cont_by('spread', 'absolute_deviation', 0.5, 'run_id', 'median_absolute_deviation') }}

),

computed_ideal as (

    select
        spread.run_id,
        avg(
            case
                when spread.step_seconds <= spread.median_seconds + 3 * mads.median_absolute_deviation
                    then spread.step_seconds
            end
        ) as ideal_step_seconds
    from spread
    inner join median_absolute_deviations as mads
        on mads.run_id = spread.run_id
    group by spread.run_id

),

ideal as (

    select
        runs.run_id,
        {% if configured_ideal is not none -%}
        {{ goodput_float(configured_ideal) }}
        {%- else -%}
        computed_ideal.ideal_step_seconds
        {%- endif %} as ideal_step_seconds
    from (select distinct run_id from step_times) as runs
    left join computed_ideal
        on computed_ideal.run_id = runs.run_id

),

deviations as (

    select
        step_times.run_id,
        abs(step_times.step_seconds - ideal.ideal_step_seconds) as deviation_seconds,
        row_number() over (
            partition by step_times.run_id order by step_times.first_timed_seq desc
        ) as recency_rank
    from step_times
    inner join ideal
        on ideal.run_id = step_times.run_id
    where ideal.ideal_step_seconds is not null and ideal.ideal_step_seconds != 0

),

recent_deviations as (

    select run_id, deviation_seconds from deviations where recency_rank <= 100

),

baseline_deviations as (

    select run_id, deviation_seconds from deviations where recency_rank > 100 and recency_rank <= 1100

),

recent_p90 as (

    {{ goodput_percentile_cont_by('recent_deviations', 'deviation_seconds', 0.9, 'run_id',
                                  'recent_p90_deviation_seconds') }}

),

baseline_median as (

    {{ goodput_percentile_cont_by('baseline_deviations', 'deviation_seconds', 0.5, 'run_id',
                                  'baseline_median_deviation_seconds') }}

),

run_deviations as (

    select
        deviations.run_id,
        count(*) as timed_steps,
        avg(deviations.deviation_seconds) as mean_deviation_seconds
    from deviations
    group by deviations.run_id

),

run_figures as (

    select
        run_deviations.run_id,
        ideal.ideal_step_seconds,
        run_deviations.timed_steps,
        run_deviations.mean_deviation_seconds,
        recent_p90.recent_p90_deviation_seconds,
        baseline_median.baseline_median_deviation_seconds
    from run_deviations
    inner join ideal
        on ideal.run_id = run_deviations.run_id
    left join recent_p90
        on recent_p90.run_id = run_deviations.run_id
    left join baseline_median
        on baseline_median.run_id = run_deviations.run_id

)

select
    run_id,
    ideal_step_seconds,
    timed_steps,
    mean_deviation_seconds,
    case
        when timed_steps < 100 then mean_deviation_seconds
        when timed_steps < 1100 then recent_p90_deviation_seconds
        else recent_p90_deviation_seconds - baseline_median_deviation_seconds
    end as step_time_deviation_seconds
from run_figures
{{ goodput_rows_by_run() }}
