{#
  The badput_source label the library's monitor writes to Cloud Monitoring for
  a bucket: its BadputType name, or CUSTOM_BADPUT_EVENTS.<TYPE> for a custom
  event type (given as null or '' for every other bucket). The one place the
  label is built; every mart takes it from int_goodput__badput_buckets or
  from this macro.
#}

{% macro goodput_gcm_badput_source(badput_type, custom_badput_event_type) -%}
    case
        when coalesce({{ custom_badput_event_type }}, '') != ''
            then {{ badput_type }} || '.' || {{ custom_badput_event_type }}
        else {{ badput_type }}
    end
{%- endmacro %}
