package devset

import (
	"fmt"
	"strings"
	"time"
)

// activity is a kind of event a speaker tells about. Its templates take
// {d}, the event's detail, and {P}, the speaker's name in questions.
type activity struct {
	details []string
	did     []string // the speaker tells it unprompted: the evidence turn
	ask     string   // the other speaker asks about it: shares the question's words
	reply   []string // the speaker's answer to ask: the evidence turn
	plan    []string // the speaker means to do it some day: a distractor
	qWhen   string
	qWhat   string // asks for the detail; "" when there is none
}

var activities = []activity{
	{details: []string{"bowl", "mug", "vase", "plate", "teapot"},
		did:   []string{"I finally went to that pottery class and made a {d}! It's a bit lopsided but I love it.", "Spent Saturday at a ceramics workshop and came home with a wobbly {d}, hands still covered in clay."},
		ask:   "How was the pottery class you signed up for?",
		reply: []string{"So much fun! I made a little {d}, it's drying on the shelf now.", "Messy but relaxing, I ended up with a {d} I'm weirdly proud of."},
		plan:  []string{"I keep saying I'll try a pottery class one of these days."},
		qWhen: "When did {P} take a pottery class?", qWhat: "What did {P} make in the pottery class?"},
	{details: []string{"Paris", "Lisbon", "Tokyo", "Chicago", "Montreal", "Rome", "Prague"},
		did:   []string{"Just got back from {d}! The food alone was worth the flight.", "We spent five days in {d}, walked everywhere and ate way too much."},
		ask:   "How was your trip? Did the vacation live up to the hype?",
		reply: []string{"Better than I imagined, {d} is gorgeous in the spring.", "Loved every minute, I already want to go back to {d}."},
		plan:  []string{"Someday I want to take a real vacation abroad, maybe Europe."},
		qWhen: "When did {P} travel to {d}?", qWhat: "Which city did {P} visit on vacation?"},
	{details: []string{"The Lanterns", "Blue Harbor", "Velvet Static", "Juniper Road", "The Night Owls"},
		did:   []string{"I saw {d} live last night, best show I've been to in years.", "Went to see {d} play downtown, my ears are still ringing."},
		ask:   "Did you end up going to that concert?",
		reply: []string{"Yes! {d} played for almost three hours.", "I did, {d} opened with my favourite song."},
		plan:  []string{"There's a concert next month I might get tickets for."},
		qWhen: "When did {P} go to a concert?", qWhat: "Which band did {P} see live?"},
	{details: []string{"5K", "half marathon", "10K charity run", "trail race"},
		did:   []string{"I ran my first {d} this morning, legs are jelly!", "Finished the {d} today, no walking breaks at all."},
		ask:   "How did the race go? You trained so hard for it.",
		reply: []string{"I finished the {d} in under my goal time!", "Tough but I crossed the line, the {d} course was hilly."},
		plan:  []string{"I should start running again, maybe sign up for a race."},
		qWhen: "When did {P} run a race?", qWhat: "What race did {P} run?"},
	{details: []string{"kitten", "beagle puppy", "rescue greyhound", "pair of guinea pigs", "parrot"},
		did:   []string{"We adopted a {d} from the shelter this week, the kids are over the moon.", "Meet the newest family member: a {d} we brought home from the rescue."},
		ask:   "Any news on the pet adoption?",
		reply: []string{"We brought home a {d}! Sleepless nights already.", "It went through, we have a {d} now."},
		plan:  []string{"The kids keep begging for a pet, we'll see."},
		qWhen: "When did {P} adopt a pet?", qWhat: "What animal did {P} adopt?"},
	{details: []string{"a bakery", "a law firm", "the children's hospital", "a robotics startup", "the public library"},
		did:   []string{"I started the new job at {d} on Monday, everyone is so nice.", "First week at {d} done, my brain is full."},
		ask:   "How are the first days at the new job?",
		reply: []string{"Good, {d} feels like the right place for me.", "Busy! {d} is nothing like my old office."},
		plan:  []string{"I've been thinking about looking for a different job."},
		qWhen: "When did {P} start a new job?", qWhat: "Where does {P} work now?"},
	{details: []string{"The Salt Orchard", "A River of Glass", "Nine Small Winters", "The Cartographer's Daughter"},
		did:   []string{"I just finished reading {d}, couldn't put it down.", "Stayed up until 2am finishing {d}, that ending!"},
		ask:   "Read anything good lately?",
		reply: []string{"{d}, you would love it.", "Yes, {d}. I cried at the end."},
		plan:  []string{"My reading pile keeps growing, I never have time."},
		qWhen: "When did {P} finish reading {d}?", qWhat: "What book did {P} read recently?"},
	{details: []string{"animal shelter", "food bank", "community garden", "soup kitchen", "children's hospital"},
		did:   []string{"Volunteered at the {d} over the weekend, it felt really meaningful.", "Spent Sunday helping out at the {d}, I'm going back next month."},
		ask:   "You said you wanted to give back more, did you find somewhere to help?",
		reply: []string{"I did, I help at the {d} on Sundays now.", "Yes, the {d} needed people so I joined."},
		plan:  []string{"I want to find somewhere to volunteer this year."},
		qWhen: "When did {P} volunteer at the {d}?", qWhat: "Where did {P} volunteer?"},
	{details: []string{"sunset over the lake", "portrait of my grandmother", "field of sunflowers", "stormy sea"},
		did:   []string{"I painted a {d} this week, it's hanging in the hallway now.", "Finished a canvas of a {d}, took me a whole month."},
		ask:   "What are you working on in your art these days?",
		reply: []string{"A {d}, mostly blues and oranges.", "I'm nearly done with a {d}."},
		plan:  []string{"I'd love to take up painting again when things calm down."},
		qWhen: "When did {P} paint a picture?", qWhat: "What did {P} paint?"},
	{details: []string{"Lake Tahoe", "Yosemite", "the state forest", "the beach at Point Reyes"},
		did:   []string{"Went camping at {d} with the kids, we roasted marshmallows every night.", "Back from three nights in a tent at {d}, so many stars."},
		ask:   "How was the camping trip with the family?",
		reply: []string{"Magical, {d} was so peaceful.", "Cold nights but {d} was beautiful."},
		plan:  []string{"We should go camping this summer if the weather holds."},
		qWhen: "When did {P} go camping?", qWhat: "Where did {P} go camping?"},
	{details: []string{"lasagna", "ramen", "chickpea curry", "sourdough bread", "paella"},
		did:   []string{"Made homemade {d} for dinner last night, turned out great.", "Tried my hand at {d} from scratch, the whole family asked for seconds."},
		ask:   "Did you try that recipe you were telling me about?",
		reply: []string{"I did, the {d} was a hit.", "Yes! The {d} took all afternoon but it was worth it."},
		plan:  []string{"I want to get better at cooking, I always order takeout."},
		qWhen: "When did {P} cook {d}?", qWhat: "What did {P} cook for dinner?"},
	{details: []string{"guitar", "piano", "violin", "drum", "cello"},
		did:   []string{"Started taking {d} lessons, my fingers hurt already!", "Had my first {d} lesson today, the teacher is patient with me."},
		ask:   "How are the music lessons going?",
		reply: []string{"Slowly! The {d} is harder than it looks.", "Great, I can play a simple song on the {d} now."},
		plan:  []string{"I always wished I'd learned an instrument as a kid."},
		qWhen: "When did {P} start {d} lessons?", qWhat: "What instrument is {P} learning?"},
	{details: []string{"LGBTQ support group", "grief support group", "new parents group", "caregivers circle"},
		did:   []string{"I went to a {d} meeting yesterday and felt really supported.", "Went to the {d} again, hearing other stories helps so much."},
		ask:   "Have you found people to talk to about everything?",
		reply: []string{"Yes, the {d} has been a lifeline.", "I joined a {d}, it meets on Tuesdays."},
		plan:  []string{"A friend suggested I look for a support group."},
		qWhen: "When did {P} go to the {d}?", qWhat: "What group did {P} join for support?"},
	{details: []string{"downtown", "Brooklyn", "the suburbs", "a farmhouse outside town"},
		did:   []string{"We finally moved into the new place in {d}, boxes everywhere.", "Moving day is over, we live in {d} now!"},
		ask:   "Are you settled into the new home yet?",
		reply: []string{"Getting there, {d} is quieter than I expected.", "Almost, we love living in {d}."},
		plan:  []string{"Our lease ends soon, we might have to move."},
		qWhen: "When did {P} move house?", qWhat: "Where did {P} move to?"},
	{details: []string{"mom", "husband", "daughter", "best friend", "grandpa"},
		did:   []string{"Threw a surprise party for my {d}'s birthday, nobody spilled the secret!", "We celebrated my {d}'s birthday with a big backyard barbecue."},
		ask:   "How did the birthday celebration go?",
		reply: []string{"My {d} was so surprised, there were happy tears.", "Perfect, my {d} had a blast."},
		plan:  []string{"Birthdays sneak up on me every year."},
		qWhen: "When did {P} throw a birthday party?", qWhat: "Whose birthday did {P} celebrate?"},
	{details: []string{"Mount Rainier", "Eagle Peak", "the ridge trail", "Half Dome"},
		did:   []string{"Hiked up {d} this weekend, the view was worth every step.", "Made it to the top of {d}, my calves are screaming."},
		ask:   "Did you make it up the mountain?",
		reply: []string{"Yes, {d} was brutal but amazing.", "We reached {d} just before the fog rolled in."},
		plan:  []string{"I want to do more hiking once it gets warmer."},
		qWhen: "When did {P} go hiking?", qWhat: "Which mountain did {P} climb?"},
	{details: []string{"data science", "counseling", "graphic design", "photography", "Spanish"},
		did:   []string{"I enrolled in an online course on {d}, classes start Monday.", "Signed up for evening classes in {d} at the community college."},
		ask:   "Are you still thinking about going back to school?",
		reply: []string{"I am, I picked {d} in the end.", "Yes, the {d} program accepted me."},
		plan:  []string{"Maybe I'll take a class or two next year."},
		qWhen: "When did {P} enroll in a course?", qWhat: "What did {P} study in the course?"},
	{details: []string{"tomatoes", "roses", "herbs", "sunflowers", "strawberries"},
		did:   []string{"Planted {d} in the backyard garden this morning, fingers crossed.", "The garden finally has {d} in it, I dug all day."},
		ask:   "How is the garden coming along?",
		reply: []string{"The {d} are already sprouting!", "Slowly, I put in {d} along the fence."},
		plan:  []string{"I keep meaning to start a garden."},
		qWhen: "When did {P} plant the garden?", qWhat: "What did {P} plant in the garden?"},
	{details: []string{"mental health", "adoption", "climate change", "online safety"},
		did:   []string{"Gave a talk about {d} at the high school today, the students asked great questions.", "I spoke about {d} at the library event, my hands were shaking."},
		ask:   "How did the presentation go?",
		reply: []string{"Better than I feared, people really care about {d}.", "Good, the {d} talk ran long because of all the questions."},
		plan:  []string{"I might volunteer to give a talk someday."},
		qWhen: "When did {P} give a talk about {d}?", qWhat: "What topic did {P} speak about?"},
	{details: []string{"ankle", "wrist", "knee", "shoulder"},
		did:   []string{"Sprained my {d} playing soccer, I'm on the couch for a week.", "Twisted my {d} during the match, the doctor says rest."},
		ask:   "How are you feeling after the accident?",
		reply: []string{"My {d} is still swollen but better.", "Healing, I can move my {d} again."},
		plan:  []string{"I need to be careful not to get hurt at soccer."},
		qWhen: "When did {P} get injured playing soccer?", qWhat: "What did {P} hurt playing soccer?"},
	{details: []string{"red hatchback", "pickup truck", "electric car", "vintage convertible"},
		did:   []string{"Bought a used {d} today, it drives like a dream.", "Picked up my {d} from the dealer this afternoon."},
		ask:   "Did you finally replace the old car?",
		reply: []string{"Yes, I got a {d}.", "I did, a {d} with low mileage."},
		plan:  []string{"My old car won't last much longer."},
		qWhen: "When did {P} buy a car?", qWhat: "What vehicle did {P} buy?"},
	{details: []string{"science", "natural history", "modern art", "aviation"},
		did:   []string{"Took the kids to the {d} museum, they didn't want to leave.", "Spent the afternoon at the {d} museum, the exhibits were incredible."},
		ask:   "What did you do with the kids over the holidays?",
		reply: []string{"We went to the {d} museum twice!", "Mostly the {d} museum, they loved it."},
		plan:  []string{"We should visit a museum when it rains."},
		qWhen: "When did {P} take the kids to a museum?", qWhat: "Which museum did {P} visit?"},
	{details: []string{"parents", "grandma", "cousin from Ohio", "college roommate"},
		did:   []string{"My {d} came to visit from out of town, the house is full!", "Had my {d} staying with us all week, lots of board games."},
		ask:   "Who was staying with you last week?",
		reply: []string{"My {d}! It was lovely to catch up.", "My {d}, we hadn't seen each other in years."},
		plan:  []string{"I should invite family over more often."},
		qWhen: "When did {P} have visitors from out of town?", qWhat: "Who came to visit {P}?"},
}

// preference is a taste a speaker reveals.
type preference struct {
	details []string
	say     []string
	q       string
}

var preferences = []preference{
	{details: []string{"jazz", "country", "hip hop", "classical", "indie folk"},
		say: []string{"Honestly I've had {d} on repeat all week.", "Nothing beats {d} music on a long drive.", "{d} is the only thing that calms me down after work."},
		q:   "What kind of music does {P} like?"},
	{details: []string{"Thai food", "tacos", "sushi", "Italian food", "dumplings"},
		say: []string{"If I could eat {d} every day I would.", "We ordered {d} again, my absolute favourite.", "{d} is my comfort food, no contest."},
		q:   "What is {P}'s favorite food?"},
	{details: []string{"basketball", "tennis", "swimming", "rock climbing", "yoga"},
		say: []string{"{d} keeps me sane, I go three times a week.", "Nothing clears my head like {d}.", "I've been obsessed with {d} lately."},
		q:   "What sport does {P} enjoy?"},
	{details: []string{"horror movies", "romantic comedies", "documentaries", "science fiction"},
		say: []string{"Movie night again, {d} as always.", "I could watch {d} all weekend.", "You know me, {d} every time."},
		q:   "What kind of films does {P} like to watch?"},
	{details: []string{"sunflowers", "lilies", "orchids", "tulips"},
		say: []string{"The {d} on my desk make me smile every morning.", "I bought myself {d} again, can't resist them."},
		q:   "What flowers does {P} like?"},
}

// chain is a two-hop fact: a relative introduced in one turn, an event of
// theirs told in another.
type chain struct {
	rel     string
	intro   []string // {N}: the relative's name
	event   []string // {N}, {d}
	details []string
	q       string // {P}
}

var chains = []chain{
	{rel: "sister", intro: []string{"My sister {N} is staying with us for a while, it's nice having her around."},
		event:   []string{"{N} brought home a little dog and called him {d}, he chews everything.", "{N}'s new furball {d} ate my slipper."},
		details: []string{"Biscuit", "Pepper", "Rocket", "Waffles"},
		q:       "What is the name of {P}'s sister's puppy?"},
	{rel: "brother", intro: []string{"My brother {N} called, he sounds happier these days."},
		event:   []string{"{N} just relocated to {d} for work.", "{N} is settling in {d}, he sent photos of the river."},
		details: []string{"Denver", "Austin", "Seattle", "Boston"},
		q:       "Which city did {P}'s brother move to?"},
	{rel: "best friend", intro: []string{"My best friend {N} and I have known each other since kindergarten."},
		event:   []string{"{N} is launching a {d} next month, I'm so proud.", "{N}'s {d} welcomed its first customers today."},
		details: []string{"coffee shop", "bookstore", "yoga studio", "bike repair shop"},
		q:       "What business is {P}'s best friend opening?"},
}

// filler is small talk: it shares names and common words with questions
// and answers none.
var filler = []string{
	"Hey {O}! It's been a while, how have you been?",
	"That sounds amazing, I'm so happy for you!",
	"Work has been hectic lately, I barely have time for anything.",
	"Haha, that's so you.",
	"I know what you mean, this week went by so fast.",
	"Thanks for asking, things are good on my end.",
	"The kids have been keeping me busy as always.",
	"I'm trying to take more time for myself these days.",
	"We should catch up properly soon, maybe over coffee?",
	"Wow, I did not expect that!",
	"That must have been hard, I'm here if you want to talk.",
	"I love that for you, you deserve it.",
	"Same here, just trying to keep up with everything.",
	"Oh nice, tell me more next time!",
	"The weather has been awful, rain every day.",
	"Honestly, family time is what matters most to me right now.",
	"I had a lazy weekend, mostly stayed in.",
	"It's funny how things work out sometimes.",
	"Good luck, let me know how it goes!",
	"Talk soon {O}, take care!",
}

// followUps are later turns in which a speaker comes back to an event
// ({d}) without telling it again: they share the event's words, not its
// date, and answer no question.
var followUps = []string{
	"I keep thinking about {d}, what a time that was.",
	"Someone at work brought up {d} today and I couldn't stop smiling.",
	"Sorry, I know I keep going on about {d}!",
	"Looking back, {d} was one of the highlights of my year.",
}

// reactions are the other speaker's answers to news, addressing the
// teller by name ({O}).
var reactions = []string{
	"That's wonderful news, {O}! I'm really happy for you.",
	"Wow {O}, you never stop surprising me.",
	"{O}, that's so cool, you have to show me pictures.",
	"Good for you {O}, that takes guts.",
}

// whenForms rephrase a "When did {P} ..." question.
var whenForms = []string{"When did {P} ", "On what date did {P} ", "Around when did {P} ", "When was it that {P} "}

// names of speakers and relatives.
var (
	speakerNames  = []string{"Caroline", "Melanie", "Jon", "Gina", "Audrey", "Andrew", "Tim", "John", "Maria", "Deborah", "Evan", "Sam", "Joanna", "Nate", "Priya", "Omar", "Lena", "Marcus", "Hana", "Diego", "Fatima", "Ivan", "Chloe", "Ravi"}
	relativeNames = []string{"Anna", "Beth", "Carlos", "Dana", "Eli", "Farah", "Gus", "Hugo", "Iris", "Jade", "Kai", "Lola"}
)

// turn is one speaker's turn; evidence labels the queries it answers.
type turn struct {
	speaker string
	text    string
	labels  []int // indexes into the conversation's queries
}

// Conversations generates n multi-session conversations between two
// people, one workspace each ("conv-01", ...), one file a session
// (notes/session-NN.md) whose title holds its date, one "##" section a
// turn, with questions about who did what, when and where, their tastes,
// and two-hop facts. Questions name the speaker where the turns say "I";
// evidence turns often share no other word with their question, while
// plans, the other speaker's questions and later mentions of the same
// event share many.
func Conversations(seed uint64, n int) Set {
	g := newGen(seed)
	set := Set{Files: map[string]string{}}
	for c := range n {
		conv := g.conversation(c)
		set.Merge(conv)
	}
	return set
}

// beat is a run of turns to place in a session.
type beat []turn

func (g *gen) conversation(c int) Set {
	ws := fmt.Sprintf("conv-%02d", c+1)
	perm := g.r.Perm(len(speakerNames))
	people := [2]string{speakerNames[perm[0]], speakerNames[perm[1]]}
	const sessions = 20
	var queries []Query
	beats := make([][]beat, sessions)
	place := func(s int, b beat) { beats[s] = append(beats[s], b) }
	ask := func(class, text string) int {
		queries = append(queries, Query{Class: class, Text: text, Workspace: ws})
		return len(queries) - 1
	}
	for p, who := range people {
		other := people[1-p]
		vars := map[string]string{"P": who}
		// Events: 12 activities each, details drawn so both speakers may
		// share an activity with different details.
		for _, a := range g.r.Perm(len(activities))[:12] {
			act := activities[a]
			d := pick(g, act.details)
			vars["d"] = d
			s := g.r.IntN(sessions)
			var qs []int
			if g.chance(0.8) {
				qw := strings.Replace(fill(act.qWhen, vars), "When did "+who+" ", fill(pick(g, whenForms), vars), 1)
				qs = append(qs, ask("temporal", qw))
			}
			if act.qWhat != "" && (len(qs) == 0 || g.chance(0.6)) {
				qs = append(qs, ask("single-hop", fill(act.qWhat, vars)))
			}
			if g.chance(0.5) {
				b := beat{{speaker: who, text: fill(pick(g, act.did), vars), labels: qs}}
				if g.chance(0.5) {
					b = append(b, turn{speaker: other, text: fill(pick(g, reactions), map[string]string{"O": who})})
				}
				place(s, b)
			} else {
				place(s, beat{{speaker: other, text: act.ask}, {speaker: who, text: fill(pick(g, act.reply), vars), labels: qs}})
			}
			// Distractors: the plan, told before the event, and the other
			// speaker mentioning the activity without doing it.
			if s > 0 && g.chance(0.6) {
				place(g.r.IntN(s), beat{{speaker: who, text: pick(g, act.plan)}})
			}
			if g.chance(0.4) {
				place(g.r.IntN(sessions), beat{{speaker: other, text: act.ask}, {speaker: who, text: pick(g, filler)}})
			}
			// A later mention of the event's detail.
			if s < sessions-1 && g.chance(0.5) {
				place(s+1+g.r.IntN(sessions-s-1), beat{{speaker: who, text: fill(pick(g, followUps), vars)}})
			}
		}
		// Preferences: stated twice in different words.
		for _, pi := range g.r.Perm(len(preferences))[:3] {
			pr := preferences[pi]
			vars["d"] = pick(g, pr.details)
			q := ask("preference", fill(pr.q, vars))
			says := g.r.Perm(len(pr.say))
			for k := range min(2, len(says)) {
				text := fill(pr.say[says[k]], vars)
				text = strings.ToUpper(text[:1]) + text[1:]
				place(g.r.IntN(sessions), beat{{speaker: who, text: text, labels: []int{q}}})
			}
		}
		// Two-hop chains.
		ch := chains[(c+p)%len(chains)]
		vars["N"] = relativeNames[(c*2+p)%len(relativeNames)]
		vars["d"] = pick(g, ch.details)
		q := ask("multi-hop", fill(ch.q, vars))
		s1 := g.r.IntN(sessions - 1)
		s2 := s1 + 1 + g.r.IntN(sessions-s1-1)
		place(s1, beat{{speaker: who, text: fill(pick(g, ch.intro), vars), labels: []int{q}}})
		place(s2, beat{{speaker: who, text: fill(pick(g, ch.event), vars), labels: []int{q}}})
	}

	set := Set{Files: map[string]string{}}
	refs := make([][]Ref, len(queries))
	date := time.Date(2023, 3, 4+c, 13, 0, 0, 0, time.UTC)
	for s := range sessions {
		date = date.AddDate(0, 0, 5+g.r.IntN(20))
		var turns []turn
		otherOf := func(speaker string) string {
			if speaker == people[0] {
				return people[1]
			}
			return people[0]
		}
		addFiller := func(speaker string) {
			turns = append(turns, turn{speaker: speaker, text: fill(pick(g, filler), map[string]string{"O": otherOf(speaker)})})
		}
		addFiller(people[s%2])
		order := g.r.Perm(len(beats[s]))
		for _, bi := range order {
			b := beats[s][bi]
			if turns[len(turns)-1].speaker == b[0].speaker {
				addFiller(otherOf(b[0].speaker))
			}
			for _, t := range b {
				if g.chance(0.4) {
					t.text += " " + fill(pick(g, filler), map[string]string{"O": otherOf(t.speaker)})
				}
				turns = append(turns, t)
			}
			if g.chance(0.6) {
				addFiller(otherOf(turns[len(turns)-1].speaker))
			}
		}
		rel := fmt.Sprintf("workspaces/%s/notes/session-%02d.md", ws, s+1)
		var b strings.Builder
		fmt.Fprintf(&b, "# Session %d, %s\n\n", s+1, date.Format("2 January 2006"))
		for k, t := range turns {
			heading := fmt.Sprintf("%d. %s", k+1, t.speaker)
			fmt.Fprintf(&b, "## %s\n\n%s\n\n", heading, t.text)
			for _, q := range t.labels {
				refs[q] = append(refs[q], Ref{Path: "/memories/" + rel, Heading: heading})
			}
		}
		set.Files[rel] = b.String()
	}
	for i := range queries {
		queries[i].ID = fmt.Sprintf("%s-q%03d", ws, i+1)
		queries[i].Set = "conversation"
		queries[i].Relevant = refs[i]
	}
	set.Queries = queries
	return set
}
