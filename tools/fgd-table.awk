#!/usr/bin/awk -f
# The FGD comparison table (used by tools/fgd-grid.sh): capsim's per-run results next to the
# study's published per-seed allocation curves.
#   awk -f tools/fgd-table.awk -v expected=.../analysis_allo_discrete.csv \
#       [-v expected_frag=.../analysis_frag_ratio_discrete.csv] results.tsv
# results.tsv lines: trace policy seed alloc@100 alloc@130 frag_ratio@130 failed wall_seconds
# (ratios 0-1). Percentages in the table are GPU allocation, % of cluster GPU capacity. A cell
# holds when |capsim mean - published mean| <= max(1.0, 2 x published std); std is the sample
# standard deviation over seeds.

function mean(sum, n) { return n > 0 ? sum / n : 0 }
function sd(sum, sq, n) { return n > 1 ? sqrt((sq - sum * sum / n) / (n - 1)) : 0 }
function abs(x) { return x < 0 ? -x : x }
function max(a, b) { return a > b ? a : b }

BEGIN {
  FS = ","
  if (expected == "") { print "fgd-table: -v expected=FILE is required" > "/dev/stderr"; exit 2 }
  while ((getline line < expected) > 0) {
    sub(/\r$/, "", line)
    n = split(line, f, ",")
    if (f[1] == "workload") {
      for (i = 1; i <= n; i++) { if (f[i] == "100") c100 = i; if (f[i] == "130") c130 = i }
      continue
    }
    t = f[1]; sub(/^openb_pod_list_/, "", t)
    p = f[2]; sub(/^[0-9]+-/, "", p)
    k = t SUBSEP p
    pn[k]++; ps100[k] += f[c100]; pq100[k] += f[c100] * f[c100]
    ps130[k] += f[c130]; pq130[k] += f[c130] * f[c130]
  }
  close(expected)
  if (expected_frag != "") {
    while ((getline line < expected_frag) > 0) {
      sub(/\r$/, "", line)
      n = split(line, f, ",")
      if (f[1] == "workload") {
        for (i = 1; i <= n; i++) if (f[i] == "130") d130 = i
        continue
      }
      t = f[1]; sub(/^openb_pod_list_/, "", t)
      p = f[2]; sub(/^[0-9]+-/, "", p)
      fn[t SUBSEP p]++; fs130[t SUBSEP p] += f[d130]
    }
    close(expected_frag)
  }
  FS = " "
  order = "Random DotProd GpuClustering GpuPacking BestFit FGD"
  npol = split(order, pol, " ")
}

{
  k = $1 SUBSEP $2
  if (!($1 in seen_trace)) { seen_trace[$1] = 1; traces[++ntr] = $1 }
  cn[k]++
  a = $4 * 100; b = $5 * 100; fr = $6 * 100
  cs100[k] += a; cq100[k] += a * a; cs130[k] += b; cq130[k] += b * b
  cf130[k] += fr; cfail[k] += $7; wall += $8; runs++
}

END {
  if (runs == 0) { print "fgd-table: no results" > "/dev/stderr"; exit 1 }
  # traces in a stable order: the published ones first, as the study lists them
  n = 0
  split("default cpu200 cpu250 gpushare60 gpushare100 gpuspec20 multigpu20 multigpu40", known, " ")
  for (i = 1; i <= 8; i++) if (known[i] in seen_trace) { list[++n] = known[i]; done[known[i]] = 1 }
  for (i = 1; i <= ntr; i++) if (!(traces[i] in done)) list[++n] = traces[i]

  print "| trace | policy | published @100 | capsim @100 | diff | | published @130 | capsim @130 | diff | | frag. ratio @130 published / capsim | failed pods |"
  print "|---|---|---:|---:|---:|---|---:|---:|---:|---|---:|---:|"
  cells = 0; held = 0
  for (i = 1; i <= n; i++) {
    t = list[i]
    for (j = 1; j <= npol; j++) {
      p = pol[j]; k = t SUBSEP p
      if (!(k in cn)) continue
      m100 = mean(cs100[k], cn[k]); s100 = sd(cs100[k], cq100[k], cn[k])
      m130 = mean(cs130[k], cn[k]); s130 = sd(cs130[k], cq130[k], cn[k])
      line = sprintf("| %s | %s |", t, p)
      if (k in pn) {
        pm100 = mean(ps100[k], pn[k]); psd100 = sd(ps100[k], pq100[k], pn[k])
        pm130 = mean(ps130[k], pn[k]); psd130 = sd(ps130[k], pq130[k], pn[k])
        d100 = m100 - pm100; d130 = m130 - pm130
        ok100 = abs(d100) <= max(1.0, 2 * psd100); ok130 = abs(d130) <= max(1.0, 2 * psd130)
        cells += 2; held += ok100 + ok130
        line = line sprintf(" %.2f ± %.2f | %.2f ± %.2f | %+.2f | %s | %.2f ± %.2f | %.2f ± %.2f | %+.2f | %s |",
                            pm100, psd100, m100, s100, d100, ok100 ? "ok" : "**off**",
                            pm130, psd130, m130, s130, d130, ok130 ? "ok" : "**off**")
      } else {
        line = line sprintf(" - | %.2f ± %.2f | | | - | %.2f ± %.2f | | |", m100, s100, m130, s130)
      }
      pf = (k in fn) ? sprintf("%.2f", mean(fs130[k], fn[k])) : "-"
      line = line sprintf(" %s / %.2f | %.0f |", pf, mean(cf130[k], cn[k]), mean(cfail[k], cn[k]))
      print line
      capm[k] = m100
    }
  }
  print ""
  printf "%d of %d published cells hold (|diff| <= max(1.0 pp, 2 published std)); %d runs, mean %.3f s wall per run.\n", held, cells, runs, wall / runs
  kf = "default" SUBSEP "FGD"; kb = "default" SUBSEP "BestFit"; kr = "default" SUBSEP "Random"
  if ((kf in capm) && (kb in capm) && (kr in capm)) {
    printf "Default trace at arrived = 100 %%: FGD %.2f, BestFit %.2f, Random %.2f: %s.\n", capm[kf], capm[kb], capm[kr],
           (capm[kf] > capm[kb] && capm[kb] > capm[kr]) ? "FGD > BestFit > Random, as published" : "**the published order does not hold**"
  }
}
