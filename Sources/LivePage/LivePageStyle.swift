extension LivePage {
    /// The page's style sheet: a grid of tiles that reflows from one column on a phone to many on
    /// a wall screen; a stale strap is greyed out and says so.
    static let css = #"""
:root { color-scheme: dark; --bg: #111418; --tile: #1c2128; --text: #e8eaed; --dim: #8b949e;
        --live: #3fb950; --stale: #6e7681; --warn: #d29922; --bad: #f85149; --accent: #58a6ff; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; font: 16px/1.35 system-ui, sans-serif; background: var(--bg); color: var(--text); }
.top { display: flex; align-items: center; gap: .75rem; padding: .6rem 1rem; border-bottom: 1px solid #30363d; }
.top h1 { font-size: 1.1rem; margin: 0; flex: 1; }
.link { font-size: .85rem; padding: .1rem .5rem; border-radius: 1rem; }
.link.up { background: #12361d; color: var(--live); }
.link.down { background: #3d1d1d; color: var(--bad); }
button { font: inherit; background: #21262d; color: var(--text); border: 1px solid #30363d; border-radius: .4rem; padding: .35rem .8rem; }
main, .login { padding: 1rem; max-width: 1400px; margin: 0 auto; }
.login { display: grid; gap: .6rem; max-width: 36rem; }
.login input { font: inherit; padding: .5rem; border-radius: .4rem; border: 1px solid #30363d; background: #0d1117; color: var(--text); }
.error { color: var(--bad); min-height: 1.2em; margin: 0; }
h2 { font-size: 1rem; color: var(--dim); font-weight: 600; margin: 1.2rem 0 .6rem; }
h2 small { font-weight: 400; }
.empty { color: var(--dim); }
.workout { margin: 0 0 .4rem; padding: .5rem .9rem; border-radius: .7rem; background: #12361d; color: var(--live); font-weight: 600; }
.workout.paused { background: #3a2e12; color: var(--warn); }
.workout .since { color: var(--dim); font-weight: 400; }
.tiles { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(15rem, 100%), 1fr)); gap: .8rem; }
.tiles.small { grid-template-columns: repeat(auto-fill, minmax(min(11rem, 100%), 1fr)); }
.tile { min-width: 0; background: var(--tile); border-radius: .7rem; padding: .7rem .9rem; border-left: .35rem solid var(--live); }
.tile .head { display: flex; flex-wrap: wrap; justify-content: space-between; gap: 0 .5rem; align-items: baseline; }
.tile .name { font-weight: 600; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.tile .battery, .tile .age, .tile .contact, .tile .hrv, .tile .note { color: var(--dim); font-size: .85rem; }
.tile .bpm { display: flex; align-items: baseline; gap: .35rem; margin: .2rem 0; }
.tile .value { font-size: 3.2rem; font-weight: 700; font-variant-numeric: tabular-nums; line-height: 1.1; }
.tile .unit { color: var(--dim); }
.tile .foot { display: flex; flex-wrap: wrap; justify-content: space-between; gap: .2rem .8rem; }
.tile .contact.off { color: var(--warn); font-weight: 600; }
.tile .battery.low { color: var(--warn); }
.tile.stale, .tile.disconnected { border-left-color: var(--stale); opacity: .75; }
.tile.stale .value, .tile.disconnected .value { color: var(--stale); }
.tile.stale .note, .tile.disconnected .note { color: var(--warn); font-weight: 600; }
.tile.waiting { border-left-color: var(--stale); }
.spark { width: 100%; height: 3rem; display: block; margin: .3rem 0; }
.spark path { fill: none; stroke: var(--accent); stroke-width: 2; stroke-linecap: round; stroke-linejoin: round; vector-effect: non-scaling-stroke; }
.tile.stale .spark path, .tile.disconnected .spark path { stroke: var(--stale); }
.tile.pedometer .value { font-size: 2.2rem; }
.chart svg { width: 100%; height: auto; background: var(--tile); border-radius: .7rem; display: block; }
#hr-today { height: 12rem; }
.chart path { fill: none; stroke-width: 2; stroke-linecap: round; stroke-linejoin: round; vector-effect: non-scaling-stroke; }
.chart .grid { stroke: #30363d; stroke-width: 1; vector-effect: non-scaling-stroke; }
.chart text { fill: var(--dim); font-size: 12px; }
.chart rect.bar { fill: var(--accent); }
.chart text.bar-value { fill: var(--text); }
.legend { display: flex; flex-wrap: wrap; gap: .3rem 1rem; font-size: .85rem; margin-top: .4rem; color: var(--dim); }
.legend i { display: inline-block; width: .8rem; height: .8rem; border-radius: .2rem; margin-right: .3rem; vertical-align: -.1rem; }
.c0 { stroke: #58a6ff; background: #58a6ff; } .c1 { stroke: #f778ba; background: #f778ba; }
.c2 { stroke: #3fb950; background: #3fb950; } .c3 { stroke: #d29922; background: #d29922; }
.c4 { stroke: #a371f7; background: #a371f7; } .c5 { stroke: #39c5cf; background: #39c5cf; }
.c6 { stroke: #ff7b72; background: #ff7b72; } .c7 { stroke: #e3b341; background: #e3b341; }
@media (max-width: 30rem) {
  .tiles, .tiles.small { grid-template-columns: repeat(2, minmax(0, 1fr)); gap: .5rem; }
  .top { flex-wrap: wrap; }
  .tile { padding: .5rem .6rem; }
  .tile .value { font-size: 2.4rem; }
  main { padding: .6rem; }
}
"""#
}
