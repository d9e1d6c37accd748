{#- Seeds of millions of rows (`dptool demo-data --scale 100`): with `--vars '{demo_csv_reader: true}'`, a seed
    whose columns all have a declared type is loaded by DuckDB's own CSV reader alone. dbt's seed first reads the
    whole file into Python (agate) before DuckDB copies it; this creates the same table (the declared types, in
    the file's column order) and runs the same COPY, without that read. Without the var: dbt's own seed. -#}
{% materialization seed, adapter='duckdb' %}
  {%- if not var('demo_csv_reader', false) -%}
    {{ return(dbt.materialization_seed_default()) }}
  {%- endif -%}

  {%- set path = adapter.get_seed_file_path(model) -%}
  {%- set delimiter = config.get('delimiter', ',') -%}
  {%- set types = config.get('column_types') or {} -%}
  {%- set empty = run_query("select * from read_csv('" ~ path ~ "', header = true, all_varchar = true, delim = '"
                            ~ delimiter ~ "') limit 0") -%}
  {#- dbt's seed runner reads this result back; the rows themselves never reach Python -#}
  {%- do store_result('agate_table', response='OK', agate_table=empty) -%}
  {%- set header = empty.column_names -%}
  {%- set undeclared = header | reject('in', types) | list -%}
  {%- if undeclared -%}
    {{ exceptions.raise_compiler_error("seed " ~ model['name'] ~ ": no column_types for " ~ undeclared | join(', ')
                                       ~ " (demo_csv_reader loads only seeds whose every column has a type)") }}
  {%- endif -%}

  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set old_relation = adapter.get_relation(database=database, schema=schema, identifier=model['alias']) -%}
  {%- if old_relation is not none and old_relation.is_view -%}
    {{ exceptions.raise_compiler_error("Cannot seed to '{}', it is a view".format(old_relation.render())) }}
  {%- endif -%}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}
  {{ run_hooks(pre_hooks, inside_transaction=True) }}
  {%- if old_relation is not none -%}
    {%- do adapter.drop_relation(old_relation) -%}
  {%- endif -%}
  {%- do adapter.create_schema(target_relation) -%}
  {%- set columns = [] -%}
  {%- for name in header -%}
    {%- do columns.append(adapter.quote_seed_column(name, config.get('quote_columns')) ~ ' ' ~ types[name]) -%}
  {%- endfor -%}
  {%- call statement('create') -%}
    create table {{ target_relation.render() }} ({{ columns | join(', ') }})
  {%- endcall -%}
  {%- set copy -%}
    COPY {{ target_relation.render() }} FROM '{{ path }}' (FORMAT CSV, HEADER TRUE, DELIMITER '{{ delimiter }}')
  {%- endset -%}
  {%- call statement('copy', fetch_result=True) -%}{{ copy }}{%- endcall -%}
  {%- set rows = load_result('copy')['data'][0][0] -%}
  {#- what target/run shows for the seed, and dbt's own result line (INSERT <rows>) -#}
  {% call noop_statement('main', 'INSERT ' ~ rows, 'INSERT', rows) %}-- by DuckDB's CSV reader alone: {{ copy }}{% endcall %}
  {% do persist_docs(target_relation, model) %}
  {{ run_hooks(post_hooks, inside_transaction=True) }}
  {{ adapter.commit() }}
  {{ run_hooks(post_hooks, inside_transaction=False) }}
  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
