//! SVG line charts over the campaign's elapsed time, drawn here (no library), with a dashed
//! vertical marker where each resumed session started.

use super::esc;
use std::fmt::Write as _;

/// One line of a chart.
pub(super) struct Line {
    pub label: String,
    pub color: &'static str,
    /// `(elapsed seconds, value)`, in time order.
    pub points: Vec<(f64, f64)>,
    /// Draw as a step function (counts) instead of straight segments.
    pub step: bool,
    /// Marked points with a hover text.
    pub marks: Vec<(f64, f64, String)>,
    /// Scaled on the chart's right-hand axis ([`Chart::right_label`]).
    pub right: bool,
}

/// A vertical marker at a time: where a resumed session started.
pub(super) struct Marker {
    /// Elapsed seconds.
    pub x: f64,
    /// Short label drawn beside it (`S2`).
    pub label: String,
    /// Hover text.
    pub title: String,
}

/// A line chart over elapsed time.
pub(super) struct Chart<'a> {
    /// `id` prefix of the SVG's title element.
    pub id: &'a str,
    pub title: &'a str,
    pub y_label: &'a str,
    /// The y axis never goes above this (percentages).
    pub y_cap: Option<f64>,
    /// The y ticks are whole numbers (counts), on both axes.
    pub integer_y: bool,
    /// Label of the right-hand axis, for lines of another scale (`Line::right`).
    pub right_label: Option<&'a str>,
    pub lines: Vec<Line>,
    /// Session starts.
    pub markers: Vec<Marker>,
}

const W: f64 = 760.0;
const H: f64 = 300.0;
const LEFT: f64 = 64.0;
/// Right margin without and with a right-hand axis.
const RIGHT: f64 = 20.0;
const RIGHT_AXIS: f64 = 60.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 46.0;

/// A step of 1, 2 or 5 × 10^k giving about `target` intervals over `range`.
fn nice_step(range: f64, target: f64) -> f64 {
    let raw = (range / target).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let nice = if norm <= 1.0 {
        1.0
    } else if norm <= 2.0 {
        2.0
    } else if norm <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// An axis from 0: (upper end, tick step), covering `max`.
fn axis(max: f64, integer: bool, cap: Option<f64>) -> (f64, f64) {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let mut step = nice_step(max, 5.0);
    if integer {
        step = step.max(1.0).round();
    }
    let mut hi = (max / step).ceil() * step;
    if let Some(cap) = cap.filter(|&c| hi > c) {
        hi = cap;
        step = nice_step(cap, 5.0);
    }
    (hi, step)
}

/// A tick label with as many decimals as the step needs.
fn tick_label(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10()).ceil() as usize
    };
    format!("{v:.decimals$}")
}

/// Keeps, per pixel column, the first, lowest, highest and last point (in order), so long
/// series stay small without losing their envelope.
fn decimate(points: &[(f64, f64)], px: impl Fn(f64) -> f64) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    let mut i = 0;
    while i < points.len() {
        let col = px(points[i].0).floor();
        let mut j = i;
        while j < points.len() && px(points[j].0).floor() == col {
            j += 1;
        }
        let group = &points[i..j];
        let lo = (0..group.len())
            .min_by(|&a, &b| group[a].1.total_cmp(&group[b].1))
            .unwrap_or(0);
        let hi = (0..group.len())
            .max_by(|&a, &b| group[a].1.total_cmp(&group[b].1))
            .unwrap_or(0);
        let mut keep = vec![0, lo, hi, group.len() - 1];
        keep.sort_unstable();
        keep.dedup();
        out.extend(keep.into_iter().map(|k| group[k]));
        i = j;
    }
    out
}

impl Chart<'_> {
    pub fn svg(&self) -> String {
        let right_label = self
            .right_label
            .filter(|_| self.lines.iter().any(|l| l.right));
        let pw = W
            - LEFT
            - if right_label.is_some() {
                RIGHT_AXIS
            } else {
                RIGHT
            };
        let ph = H - TOP - BOTTOM;
        let all = || self.lines.iter().flat_map(|l| l.points.iter());
        let side = |right: bool| {
            self.lines
                .iter()
                .filter(move |l| l.right == right)
                .flat_map(|l| l.points.iter())
        };
        let has_data = all().next().is_some();
        let x_max = all()
            .map(|p| p.0)
            .chain(self.markers.iter().map(|m| m.x))
            .filter(|x| x.is_finite())
            .fold(0.0, f64::max);
        let y_max = side(false).map(|p| p.1).fold(0.0, f64::max);
        let r_max = side(true).map(|p| p.1).fold(0.0, f64::max);

        // Time unit by range, so tick labels stay short.
        let (unit, unit_name) = if x_max >= 7200.0 {
            (3600.0, "h")
        } else if x_max >= 600.0 {
            (60.0, "min")
        } else {
            (1.0, "s")
        };
        let (x_hi, x_step) = axis(x_max / unit, false, None);
        let (y_hi, y_step) = axis(y_max, self.integer_y, self.y_cap);
        let (r_hi, r_step) = axis(r_max, self.integer_y, self.y_cap);
        let frame = Frame {
            pw,
            ph,
            unit,
            x_hi,
            y_hi,
            r_hi,
        };

        let mut s = String::new();
        let _ = write!(
            s,
            "<svg class=\"chart\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" \
             role=\"img\" aria-labelledby=\"{id}-title\">\n<title id=\"{id}-title\">{t}</title>\n",
            id = self.id,
            t = esc(self.title)
        );
        let _ = writeln!(
            s,
            "<rect class=\"plot\" x=\"{LEFT}\" y=\"{TOP}\" width=\"{pw}\" height=\"{ph}\"/>"
        );

        self.axes_svg(
            &mut s,
            &frame,
            [x_step, y_step, r_step],
            unit_name,
            right_label,
        );
        self.lines_svg(&mut s, &frame);
        self.markers_svg(&mut s, &frame);
        if !has_data {
            let _ = writeln!(
                s,
                "<text class=\"nodata\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">no data</text>",
                LEFT + pw / 2.0,
                TOP + ph / 2.0
            );
        }

        self.legend_svg(&mut s, right_label);
        s.push_str("</svg>");
        s
    }
}

/// Where a chart's plot is, and its scales: seconds to x, values to the left or right y.
struct Frame {
    pw: f64,
    ph: f64,
    unit: f64,
    x_hi: f64,
    y_hi: f64,
    r_hi: f64,
}

impl Frame {
    fn sx(&self, x: f64) -> f64 {
        LEFT + (x / self.unit / self.x_hi) * self.pw
    }
    fn sy(&self, y: f64) -> f64 {
        TOP + self.ph - (y.clamp(0.0, self.y_hi) / self.y_hi) * self.ph
    }
    fn sr(&self, y: f64) -> f64 {
        TOP + self.ph - (y.clamp(0.0, self.r_hi) / self.r_hi) * self.ph
    }
}

impl Chart<'_> {
    /// The grid, the ticks and their labels, the axes and the axes' labels.
    fn axes_svg(
        &self,
        s: &mut String,
        f: &Frame,
        [x_step, y_step, r_step]: [f64; 3],
        unit_name: &str,
        right_label: Option<&str>,
    ) {
        // Grid and ticks.
        let mut k = 0.0;
        while k * y_step <= f.y_hi + y_step * 1e-9 {
            let v = k * y_step;
            let y = f.sy(v);
            let _ = writeln!(
                s,
                "<line class=\"grid\" x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/>\
                 <text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                LEFT + f.pw,
                LEFT - 6.0,
                y + 4.0,
                tick_label(v, y_step)
            );
            k += 1.0;
        }
        if let Some(label) = right_label {
            let color = self
                .lines
                .iter()
                .find(|l| l.right)
                .map_or("#555", |l| l.color);
            let xr = LEFT + f.pw;
            let mut k = 0.0;
            while k * r_step <= f.r_hi + r_step * 1e-9 {
                let v = k * r_step;
                let y = f.sr(v);
                let _ = writeln!(
                    s,
                    "<line class=\"axis\" x1=\"{xr:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/>\
                     <text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" style=\"fill:{color}\">{}</text>",
                    xr + 4.0,
                    xr + 6.0,
                    y + 4.0,
                    tick_label(v, r_step)
                );
                k += 1.0;
            }
            let _ = writeln!(
                s,
                "<line class=\"axis\" x1=\"{xr:.1}\" y1=\"{TOP}\" x2=\"{xr:.1}\" y2=\"{:.1}\"/>\
                 <text class=\"label\" transform=\"translate({:.1} {:.1}) rotate(90)\" \
                 text-anchor=\"middle\">{}</text>",
                TOP + f.ph,
                W - 12.0,
                TOP + f.ph / 2.0,
                esc(label)
            );
        }
        let mut k = 0.0;
        while k * x_step <= f.x_hi + x_step * 1e-9 {
            let v = k * x_step;
            let x = LEFT + v / f.x_hi * f.pw;
            let _ = writeln!(
                s,
                "<line class=\"grid\" x1=\"{x:.1}\" y1=\"{TOP}\" x2=\"{x:.1}\" y2=\"{:.1}\"/>\
                 <text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                TOP + f.ph,
                TOP + f.ph + 16.0,
                tick_label(v, x_step)
            );
            k += 1.0;
        }
        // Axes and their labels.
        let _ = writeln!(
            s,
            "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{b:.1}\" x2=\"{r:.1}\" y2=\"{b:.1}\"/>\
             <line class=\"axis\" x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{b:.1}\"/>",
            b = TOP + f.ph,
            r = LEFT + f.pw
        );
        let _ = writeln!(
            s,
            "<text class=\"label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">elapsed ({unit_name})</text>",
            LEFT + f.pw / 2.0,
            H - 8.0
        );
        let _ = writeln!(
            s,
            "<text class=\"label\" transform=\"translate(14 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
            TOP + f.ph / 2.0,
            esc(self.y_label)
        );
    }

    /// The lines, each with its marks.
    fn lines_svg(&self, s: &mut String, f: &Frame) {
        for l in &self.lines {
            if l.points.is_empty() {
                continue;
            }
            let scale_y = |y: f64| if l.right { f.sr(y) } else { f.sy(y) };
            let pts = decimate(&l.points, |x| f.sx(x));
            let mut d = String::new();
            for (i, &(x, y)) in pts.iter().enumerate() {
                let (x, y) = (f.sx(x), scale_y(y));
                if i == 0 {
                    let _ = write!(d, "M{x:.1} {y:.1}");
                } else if l.step {
                    let _ = write!(d, " H{x:.1} V{y:.1}");
                } else {
                    let _ = write!(d, " L{x:.1} {y:.1}");
                }
            }
            let _ = writeln!(
                s,
                "<path class=\"line\" d=\"{d}\" stroke=\"{}\"><title>{}</title></path>",
                l.color,
                esc(&l.label)
            );
            for (x, y, text) in &l.marks {
                let _ = writeln!(
                    s,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"{}\"><title>{}</title></circle>",
                    f.sx(*x),
                    scale_y(*y),
                    l.color,
                    esc(text)
                );
            }
        }
    }

    /// Session starts: a dashed vertical line each, labelled at the top of the plot.
    fn markers_svg(&self, s: &mut String, f: &Frame) {
        for m in self
            .markers
            .iter()
            .filter(|m| m.x.is_finite() && m.x >= 0.0)
        {
            let x = f.sx(m.x);
            let _ = writeln!(
                s,
                "<g class=\"session\"><title>{t}</title>\
                 <line class=\"resume-line\" x1=\"{x:.1}\" y1=\"{TOP}\" x2=\"{x:.1}\" y2=\"{b:.1}\"/>\
                 <text class=\"resume-label\" x=\"{tx:.1}\" y=\"{ty:.1}\">{l}</text></g>",
                t = esc(&m.title),
                b = TOP + f.ph,
                tx = x + 3.0,
                ty = TOP + 12.0,
                l = esc(&m.label)
            );
        }
    }

    /// The legend, left to right above the plot.
    fn legend_svg(&self, s: &mut String, right_label: Option<&str>) {
        let mut x = LEFT;
        for l in &self.lines {
            let label = if l.right && right_label.is_some() {
                format!("{} (right axis)", l.label)
            } else {
                l.label.clone()
            };
            let _ = writeln!(
                s,
                "<line x1=\"{x:.1}\" y1=\"16\" x2=\"{:.1}\" y2=\"16\" stroke=\"{}\" stroke-width=\"3\"/>\
                 <text class=\"legend\" x=\"{:.1}\" y=\"20\">{}</text>",
                x + 18.0,
                l.color,
                x + 23.0,
                esc(&label)
            );
            x += 23.0 + 7.0 * label.chars().count() as f64 + 18.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_axes() {
        assert_eq!(axis(87.0, false, Some(100.0)), (100.0, 20.0));
        assert_eq!(axis(3.0, true, None), (3.0, 1.0));
        assert_eq!(axis(0.0, true, None), (1.0, 1.0));
        assert_eq!(axis(12.3, false, None), (15.0, 5.0));
        let (hi, step) = axis(0.37, false, None);
        assert!((hi - 0.4).abs() < 1e-12 && (step - 0.1).abs() < 1e-12);
        assert_eq!(tick_label(0.30000000000000004, 0.1), "0.3");
        assert_eq!(tick_label(40.0, 20.0), "40");
    }

    #[test]
    fn decimation_keeps_the_envelope() {
        let pts: Vec<(f64, f64)> = (0..10_000)
            .map(|i| (i as f64 / 100.0, if i == 5000 { 99.0 } else { 1.0 }))
            .collect();
        let d = decimate(&pts, |x| x);
        assert!(d.len() <= 4 * 101, "{}", d.len());
        assert!(d.contains(&(50.0, 99.0)));
        assert_eq!(d.first(), pts.first());
        assert_eq!(d.last(), pts.last());
    }

    #[test]
    fn long_campaigns_use_hours_and_a_right_axis_when_asked() {
        let line = |right| Line {
            label: "l".into(),
            color: "#000",
            points: vec![(0.0, 0.0), (10_000.0, 3.0)],
            step: true,
            marks: Vec::new(),
            right,
        };
        let chart = |right| Chart {
            id: "t",
            title: "t",
            y_label: "y",
            y_cap: None,
            integer_y: true,
            right_label: Some("r"),
            lines: vec![line(false), line(right)],
            markers: Vec::new(),
        };
        let svg = chart(true).svg();
        assert!(svg.contains("elapsed (h)"));
        assert!(svg.contains("rotate(90)"), "right axis label");
        assert!(svg.contains("l (right axis)"));
        let svg = chart(false).svg();
        assert!(
            !svg.contains("rotate(90)"),
            "no right-hand line, no right axis"
        );
    }
}
