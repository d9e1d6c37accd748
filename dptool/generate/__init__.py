"""The DI-Bench pipeline of `dptool generate`, a module per stage; pipeline runs them in this order:

 1. load         dptool.project.prepare (manifest -> catalog), proofs (the catalog-level rule proofs read back)
 2. graph        graph (the artifact linkage graph), graph_draw (its picture)
 3. sample       profile (dimension values and months), sample (skeletons, the five scorers, MMR)
 4. probe        probe (where each skeleton's rules change its metric; nothing built)
 5. instantiate  instantiate (analysis types, windows, slices, gold model arguments)
 6. materialize  materialize (gold models compiled by dbt, their SQL run on the target, kept ones written)
 7. enrich       enrich (answers in DI-Bench's formats from the gold rows)
 8. phrase       phrase (templates) or llm_phrase (backward phrasing with an LLM)
 9. validate     validate (stage 1), judge (stage 2, the LLM judge, and one rewrite)
10. augment      pipeline (more candidates for types below the minimum), knowledge (knowledge-tier tasks)
11. export       export (the bundle, atomically), refresh (what changed since an earlier bundle)
Beside the pipeline: ablate (`dptool ablate pairing`), link (`dptool link`: LLM-proposed rule links, verified),
rule_free (a task's answer under no rule, and the tasks it answers right: card.md and the scorer read it).

May import: dptool.project, dptool.llm (the client), dptool.answers, dptool.bundle, dptool.sql, dptool.outdir,
dptool.progress (progress in a log), dptool.errors.
Not evaluate, dp or cli: data flows project -> generate -> bundle -> evaluate.
"""
