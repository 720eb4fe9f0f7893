{#
  The events of int_goodput__timeline_curves, one place for both the model's
  tails and its whole runs: each span of `rows` (run_id, measure,
  custom_badput_event_type, start_offset, end_offset, amount) adds its slope
  and its intercept at its start and takes them back at its end, where its
  amount lands; a point (shorter than a microsecond) jumps by its amount.
  Slopes and intercepts are exact (goodput_exact), so a span's two events
  cancel exactly and a running sum is zero again once every span so far has
  ended. goodput_curve_state_before is the same sums taken up to a cut
  without writing the events out.
#}

{#- A span lasts more than a microsecond; its slope spreads its amount over it. `of`: a qualifier. -#}
{% macro goodput_curve_is_span(of='') -%}
{{ of }}end_offset - {{ of }}start_offset > 1e-6
{%- endmacro %}

{% macro goodput_curve_slope(of='') -%}
{{ of }}amount / ({{ of }}end_offset - {{ of }}start_offset)
{%- endmacro %}

{% macro goodput_curve_events(rows) -%}
    {%- set is_span = goodput_curve_is_span() -%}
    {%- set slope = goodput_curve_slope() -%}
    select
        run_id,
        measure,
        custom_badput_event_type,
        start_offset as at_offset,
        case when {{ is_span }} then 0 else amount end as jump,
        {{ goodput_exact("case when " ~ is_span ~ " then " ~ slope ~ " else 0 end") }} as slope_delta,
        {{ goodput_exact("case when " ~ is_span ~ " then 0 else amount end") }}
            - {{ goodput_exact("case when " ~ is_span ~ " then " ~ slope ~ " * start_offset else 0 end") }}
            as intercept_delta
    from {{ rows }}

    union all

    select
        run_id,
        measure,
        custom_badput_event_type,
        end_offset,
        0,
        -{{ goodput_exact(slope) }},
        {{ goodput_exact(slope ~ " * start_offset") }} + {{ goodput_exact("amount") }}
    from {{ rows }}
    where {{ is_span }}
{%- endmacro %}


{#- Per run and measure, the sums of goodput_curve_events(rows) strictly
    before each run's cut (cuts: run_id, cut_offset), and the last event
    offset there: at_offset, slope_exact, intercept_exact. The same exact
    values as summing the events, in one pass over the rows and without the
    pairs that cancel: a span ended before the cut leaves its amount in the
    intercept and nothing in the slope, a span open at the cut its slope and
    minus slope * start, a point its amount. (At L the events before the cut
    are 6.6M rows; writing them out was most of the model's incremental time.) -#}
{% macro goodput_curve_state_before(rows, cuts) -%}
    {%- set is_span = goodput_curve_is_span('rows.') -%}
    {%- set slope = goodput_curve_slope('rows.') -%}
    {%- set open_at_cut = is_span ~ " and rows.end_offset >= cuts.cut_offset" -%}
    select
        rows.run_id,
        rows.measure,
        rows.custom_badput_event_type,
        max(case when {{ is_span }} and rows.end_offset < cuts.cut_offset then rows.end_offset
            else rows.start_offset end) as at_offset,
        sum(case when {{ open_at_cut }} then {{ goodput_exact(slope) }} else 0 end) as slope_exact,
        sum(case
            when {{ open_at_cut }} then -{{ goodput_exact(slope ~ " * rows.start_offset") }}
            else {{ goodput_exact("rows.amount") }}
        end) as intercept_exact
    from {{ rows }} as rows
    inner join {{ cuts }} as cuts
        on cuts.run_id = rows.run_id
        and rows.start_offset < cuts.cut_offset
    group by rows.run_id, rows.measure, rows.custom_badput_event_type
{%- endmacro %}
