extension LivePage {
    /// The page's document: the token form, the workout in progress, the strap and pedometer
    /// tiles, the two charts.
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>HealthGate live</title>
<link rel="stylesheet" href="/live.css">
<script src="/live.js" defer></script>
</head>
<body>
<header class="top">
  <h1>HealthGate live</h1>
  <span id="link" class="link down" title="the live stream from the gateway">connecting…</span>
  <button id="forget" type="button" hidden>change token</button>
</header>

<form id="login" class="login" hidden>
  <label for="token">Access token (<code>healthgate token create --name coach --read heartRate,stepCount</code>)</label>
  <input id="token" name="token" type="password" autocomplete="off" spellcheck="false" placeholder="hg_…" required>
  <button type="submit">Show</button>
  <p id="login-error" class="error" role="alert"></p>
</form>

<main id="page" hidden>
  <p id="workout" class="workout" hidden aria-live="polite"><span class="what"></span> <span class="since"></span></p>

  <section aria-labelledby="straps-title">
    <h2 id="straps-title">Heart rate</h2>
    <p id="no-straps" class="empty">No heart-rate strap yet.</p>
    <div id="straps" class="tiles"></div>
  </section>

  <section aria-labelledby="pedometers-title" id="pedometers-section" hidden>
    <h2 id="pedometers-title">Steps today</h2>
    <div id="pedometers" class="tiles small"></div>
  </section>

  <section aria-labelledby="hr-title" class="chart">
    <h2 id="hr-title">Heart rate today <small>(average per minute)</small></h2>
    <svg id="hr-today" role="img" aria-label="heart rate per minute today" viewBox="0 0 720 200" preserveAspectRatio="none"></svg>
    <div id="hr-legend" class="legend"></div>
  </section>

  <section aria-labelledby="steps-title" class="chart">
    <h2 id="steps-title">Steps, last seven days</h2>
    <svg id="steps-week" role="img" aria-label="steps per day, last seven days" viewBox="0 0 700 220"></svg>
  </section>
</main>
</body>
</html>
"""#
}
